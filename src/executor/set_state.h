// What an ExecutorSet and each of its executors hold (internal to
// executor/; the contract is executor/executor.h's).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "base/unique_fd.h"
#include "executor/call.h"
#include "executor/capture.h"
#include "executor/executor.h"
#include "executor/policy_cache.h"
#include "executor/scratch.h"
#include "kernel/observed_thread.h"
#include "repair/sweep_journal.h"
#include "run/warm_slot.h"
#include "state/state_dir.h"

namespace corral::executor {

struct SetState : std::enable_shared_from_this<SetState> {
  ExecutorSetOptions options;
  HostContext host;
  std::optional<ResolvedRequest> resolved;  // the workspace fixed (spec.workspace)
  std::string workspace;     // canonical; "" with none
  UniqueFd workspace_fd;     // O_PATH, opened once
  std::unique_ptr<Approver> default_approver;
  Approver* approver = nullptr;
  std::optional<ScratchDir> scratch;
  Tracker tracker;
  // The thread each executor's policy is derived on (executor/policy_cache.h);
  // null where this kernel cannot observe it: every call then derives.
  // Declared before `all`, so it outlives every executor's cache.
  std::unique_ptr<ObservedThread> observer;
  std::string no_observer;  // why there is none (ObservedThread::Start's error)
  std::mutex mutex;  // guards what follows and the scratch's executor dirs
  std::map<std::string, Executor*> by_key;
  std::vector<std::unique_ptr<Executor>> all;  // every executor made, closed ones too
  int next_index = 0;

  // A call's directory, checked to lie inside the workspace (executor.h).
  Result<std::string> ResolveCwd(const std::string& cwd) const;

  // corral's state directory for the calls (RunOptions::state_dir), opened
  // from "/" and checked once, at the first call that asks, for `home`
  // (the policies' home; options.state_home when set): each run takes a
  // checked copy of the pinned descriptor instead of walking again. Null
  // when it could not be opened: each run then opens it (and fails closed,
  // or goes on without the journal) as it would alone.
  const StateDir* PinnedStateDir(const std::string& home);

 private:
  std::mutex state_dir_mutex;  // guards what follows
  std::optional<StateDir> state_dir;  // never replaced once set: runs hold a pointer to it
  std::string state_dir_home;
};

struct Executor::State {
  int index = 0;
  std::optional<ResolvedRequest> resolved;  // the set's, plus this executor's HOME and TMPDIR grants
  Tracker tracker;
  std::mutex run_mutex;  // the executor's calls run one at a time; guards journal_slot
  // The sweep journal's slot its calls (not its processes) keep from one
  // to the next (RunOptions::journal_slot); emptied when the executor closes.
  SweepJournalSlot journal_slot;
  UniqueFd null;  // /dev/null, the calls' stdin, opened at the first (guarded by run_mutex)
  CaptureThread capture;  // reads each call's output (guarded by run_mutex)
  std::string report;
  // Each call's Policy: the last one's while nothing it was derived from
  // changed (gate::AdmitRequest::deriver).
  std::unique_ptr<PolicyCache> policy_cache;

  // The executor's warm sandbox (exec/warm_sandbox.h), started at its first
  // call; each call holds it (shared) while it runs. Turned off (every call
  // cold, and why) when its plan cannot run warm, a warm sandbox could not
  // start, or the executor was closed.
  WarmSlot warm;

  // Closes the warm sandbox, killing what runs in it; calls from now on run
  // nothing warm.
  void StopWarm();
};

}  // namespace corral::executor
