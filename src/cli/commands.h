// One struct per subcommand: Register adds its flags to a CLI11 sub-app,
// Execute runs it and returns the process exit code.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "audit/audit.h"
#include "cli/approval_flags.h"
#include "cli/policy_flags.h"
#include "policy/policy.h"
#include "state/state_dir.h"

namespace CLI {
class App;
}

namespace corral::cli {

// Where a front end's audit trail goes: `chosen` (--audit, else the user
// config's audit.trail) when set, "-" meaning stderr; else corral's state
// directory under `home` (stderr, said in one line, when it cannot be made).
Result<AuditTrail> OpenTrail(const std::optional<std::string>& chosen, const std::string& home);
// The same, with the state directory as the caller already opened it (made
// when missing; an unsafe one is the error), so a run walks it once.
Result<AuditTrail> OpenTrail(const std::optional<std::string>& chosen, const Result<StateDir>& state);

struct RunCommand {
  PolicyFlags flags;
  std::optional<std::string> audit;
  std::optional<std::string> policy_file;
  std::optional<std::string> sandbox_permissions;  // escalation: the wider mode for this one call
  std::optional<std::string> justification;
  std::optional<std::string> overlay_on;  // --overlay-on RUN (implies --overlay)
  ApprovalFlags approval;
  void Register(CLI::App& app);
  int Execute(std::vector<std::string> command) const;
  // A run refused before its flags could be parsed (`args`: the words
  // before `--`) still leaves its failed record: on stderr, and in the
  // --audit file when `args` names one. Prints the usage error; returns the exit code.
  static int RefuseUsage(const std::vector<std::string>& args, const Error& error);

 private:
  Result<Policy> LoadPolicy() const;
};

struct ExplainCommand {
  PolicyFlags flags;
  bool json = false;
  void Register(CLI::App& app);
  int Execute(std::vector<std::string> command) const;
};

struct WrapCommand {
  PolicyFlags flags;
  bool json = false;
  std::optional<std::string> backend;
  std::optional<std::string> policy_dir;
  std::optional<std::string> audit;  // passed to the native runner's argv
  ApprovalFlags approval;
  void Register(CLI::App& app);
  int Execute(std::vector<std::string> command) const;
};

struct SessionCommand {
  std::string action;  // new, mode, show
  std::vector<std::string> args;
  std::optional<std::string> cwd;
  std::optional<std::string> id;
  std::string source = "user";
  bool json = false;
  void Register(CLI::App& app);
  int Execute() const;
};

struct QuarantineCommand {
  std::string action;  // list, show, restore
  std::vector<std::string> args;
  bool overwrite = false;
  bool json = false;
  void Register(CLI::App& app);
  int Execute() const;
};

// `corral mcp [policy flags]`: the stdio MCP server (mcp/server.h).
struct McpCommand {
  PolicyFlags flags;
  std::optional<std::string> audit;
  void Register(CLI::App& app);
  int Execute() const;
};

// changes, diff, apply, discard (cli/overlay.cc): `verb` says which.
struct OverlayReviewCommand {
  explicit OverlayReviewCommand(std::string which) : verb(std::move(which)) {}
  std::string verb;
  std::vector<std::string> args;
  bool stat = false;
  bool json = false;
  std::vector<std::string> include_protected;
  std::optional<std::string> audit;
  void Register(CLI::App& app);
  int Execute() const;
};

struct CheckCommand {
  bool json = false;
  void Register(CLI::App& app);
  int Execute() const;
};

struct SetupCommand {
  std::string what;       // "apparmor"
  bool install = false;   // write the profile instead of printing it
  std::string directory;  // --install's directory; empty: /etc/apparmor.d (root only)
  void Register(CLI::App& app);
  int Execute() const;
};

struct HashCommand {
  std::string path;
  void Register(CLI::App& app);
  int Execute() const;
};

}  // namespace corral::cli
