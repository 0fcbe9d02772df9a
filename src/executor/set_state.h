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
#include "executor/executor.h"
#include "executor/scratch.h"

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
  std::mutex mutex;  // guards what follows and the scratch's executor dirs
  std::map<std::string, Executor*> by_key;
  std::vector<std::unique_ptr<Executor>> all;  // every executor made, closed ones too
  int next_index = 0;

  // A call's directory, checked to lie inside the workspace (executor.h).
  Result<std::string> ResolveCwd(const std::string& cwd) const;
};

struct Executor::State {
  int index = 0;
  std::optional<ResolvedRequest> resolved;  // the set's, plus this executor's HOME and TMPDIR grants
  Tracker tracker;
  std::mutex run_mutex;  // the executor's calls run one at a time
  std::string report;
};

}  // namespace corral::executor
