// An executor's Policy, kept from one call to the next while nothing it was
// derived from has changed, and derived again (BuildPolicy) when something
// has. The answer is always the one BuildPolicy would give at the call.
//
//   PolicyCache cache(set_thread);       // one per executor; the thread is the set's
//   request.deriver = &cache;            // gate::Admit asks it for the Policy
//
// A derivation runs on the set's ObservedThread (kernel/observed_thread.h):
// every call BuildPolicy makes there that can look at a name stops first for
// a NameWatch (kernel/name_watch.h) to watch what it depends on. The Policy
// is kept only when all of it could be watched and nothing changed while it
// was derived; a later call with the same host context and spec gets a copy
// of it while the watch reports no change (one read of the inotify queue and
// one poll of the mount table). Anything else derives again: another
// working directory or spec, a change to any name, listing, attribute or
// content the derivation looked at (made by a call's command, another run in
// the workspace, or anyone), a mount or unmount, an inotify overflow.
//
// With no thread (a kernel without seccomp user notification), or when a
// derivation looked at something it cannot watch (unwatchable() says what),
// every call derives: unobserved, but for one in 2, 4, ... 64 calls, which
// tries again. A call that finds the set's thread busy with another
// executor's derivation derives on its own thread, and does not keep it.
#pragma once

#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "executor/executor.h"
#include "kernel/name_watch.h"
#include "kernel/observed_thread.h"
#include "policy/policy.h"

namespace corral::executor {

class PolicyCache final : public PolicyDeriver {
 public:
  // `thread` (not owned; may be null) must outlive the cache; without one,
  // `no_thread` says why (ObservedThread::Start's error).
  PolicyCache(ObservedThread* thread, std::string no_thread) : thread_(thread), no_thread_(std::move(no_thread)) {}

  Result<Policy> Derive(const HostContext& host, const PolicySpec& spec) override;

  using Counts = Executor::PolicyDerivations;
  Counts counts() const;

 private:
  struct Kept {
    HostContext host;
    PolicySpec spec;
    std::vector<std::string> state_dirs;
    Policy policy;
    NameWatch watch;
  };
  static constexpr int kMaxBackoff = 64;
  ObservedThread* thread_;
  std::string no_thread_;
  mutable std::mutex mutex_;
  std::optional<Kept> kept_;
  Counts counts_;
  // After an unwatchable derivation, how many next ones derive unobserved
  // (an observed derivation costs a round trip per call it makes), and how
  // many the next unwatchable one will skip.
  int skip_ = 0;
  int backoff_ = 1;
};

}  // namespace corral::executor
