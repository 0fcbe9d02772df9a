// The grant flags shared by `run`, `explain` (and later `wrap`): each one
// feeds the PolicyBuilder, so every front end builds the same Policy.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "policy/policy.h"

namespace CLI {
class App;
}

namespace corral::cli {

struct PolicyFlags {
  std::vector<std::string> allow_read;
  std::vector<std::string> allow_write;
  std::vector<std::string> allow_exec;
  std::vector<std::string> allow_env;
  std::optional<long long> timeout;
  std::optional<std::string> workspace;
  bool no_workspace = false;
  std::string network = "none";
  std::optional<std::string> pin_sha256;
  bool best_effort = false;
  std::optional<std::string> mode;
  bool acknowledge_danger = false;
  std::vector<std::string> forbid_read;
  std::optional<std::string> home;

  void Register(CLI::App& app);
  // True when any policy flag was given.
  bool Any() const;
  Result<Policy> Build(const HostContext& host) const;
};

// Splits argv at the first "--": the part before goes to CLI11, the part
// after is the command. Returns false when there is no "--".
bool SplitAtSeparator(int argc, char** argv, std::vector<std::string>* before, std::vector<std::string>* command);

// Prints "corral: <message>" on stderr.
void PrintError(const std::string& message);

}  // namespace corral::cli
