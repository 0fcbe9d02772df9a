// WarmSlot: the one warm sandbox a front end keeps for its calls.
//
// An executor (executor/executor.h) and `corral mcp`'s bash tool each run
// their calls in one warm sandbox (exec/warm_sandbox.h), started at the
// first call under that call's policy (StartWarm, run/run.h). The slot
// holds it between calls. Contract:
//   - For(policy) gives the sandbox kept, or starts one under `policy` when
//     there is none or the one kept was lost (its init killed from outside).
//     A sandbox that cannot be started turns the slot off: every later call
//     gets null and runs cold; off_reason() says why. A slot turned off
//     (Off) or closed gives null too.
//   - After(used, cold_because) drops the sandbox a call was given when
//     RunConfined refused it for that call as lost ("warm_lost") or as not
//     the sandbox the call's plan needs ("policy_changed"): the next call
//     starts a new one. It is closed when the last call holding it ends.
//   - Close(why) closes the sandbox kept and turns the slot off.
// Thread-safe: calls hold their own reference, so a sandbox dropped while
// a call runs in it lives until that call ends.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "exec/warm_sandbox.h"
#include "policy/policy.h"

namespace corral {

class WarmSlot {
 public:
  std::shared_ptr<WarmSandbox> For(const Policy& policy);
  void After(const std::shared_ptr<WarmSandbox>& used, const std::optional<std::string>& cold_because);
  // Every later call runs cold, for `why`; the sandbox kept is not closed.
  void Off(std::string why);
  void Close(std::string why);
  std::optional<std::string> off_reason() const;

 private:
  mutable std::mutex mutex_;
  std::shared_ptr<WarmSandbox> warm_;
  std::optional<std::string> off_;
};

}  // namespace corral
