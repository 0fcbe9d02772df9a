// The policy flags shared by `run`, `explain` and `wrap`. They fill a
// RunRequest (resolve/request.h), so the CLI resolves config files, presets,
// profiles, sessions and its own flags exactly as every other front end does.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "base/result.h"
#include "resolve/request.h"
#include "policy/policy.h"

namespace CLI {
class App;
}

namespace corral::cli {

// How a setting of type T is held as typed on the command line.
template <typename T>
using FlagText = std::conditional_t<std::is_same_v<T, bool>, bool,
                                    std::conditional_t<std::is_same_v<T, std::chrono::seconds>,
                                                       std::optional<long long>, std::optional<std::string>>>;

struct PolicyFlags {
  // The list settings (policy/spec_fields.h): each flag repeatable.
#define CORRAL_FLAG_LIST(member, Adder, setting) std::vector<std::string> member;
  CORRAL_SANDBOX_LISTS(CORRAL_FLAG_LIST)
#undef CORRAL_FLAG_LIST
  // The spec's other fields.
  std::optional<std::string> workspace;
  bool no_workspace = false;
  std::optional<std::string> pin_sha256;
  std::optional<std::string> mode;
  bool acknowledge_danger = false;
  // The scalar sandbox settings (policy/spec_fields.h), as typed: a switch
  // is a bool, seconds a number, a choice or a size its text.
#define CORRAL_FLAG_MEMBER(member, Setter, setting) FlagText<SettingValue<setting>> member{};
  CORRAL_SANDBOX_SETTINGS(CORRAL_FLAG_MEMBER)
#undef CORRAL_FLAG_MEMBER
  // The other vocabularies.
  std::optional<std::string> config;
  bool no_config = false;
  std::optional<std::string> preset;
  std::optional<std::string> approval;
  std::optional<std::string> session;
  std::optional<std::string> profile;
  std::optional<std::string> profile_ceiling;

  void Register(CLI::App& app);
  // True when any policy flag was given.
  bool Any() const;
  Result<RunRequest> ToRequest() const;
  Result<ResolvedRequest> Resolve(const HostContext& host) const;
  // Resolve, then build the Policy (for front ends with no approver).
  Result<Policy> Build(const HostContext& host) const;
};

// Splits argv at the first "--": the part before goes to CLI11, the part
// after is the command. Returns false when there is no "--".
bool SplitAtSeparator(int argc, char** argv, std::vector<std::string>* before, std::vector<std::string>* command);

// Prints "corral: <message>" on stderr.
void PrintError(const std::string& message);

}  // namespace corral::cli
