#include "cli/policy_flags.h"


#include <CLI/CLI.hpp>
#include <cstdio>

namespace corral::cli {

void PolicyFlags::Register(CLI::App& app) {
  auto repeatable = [](CLI::Option* option) {
    option->type_name("PATH")->expected(1)->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  };
  repeatable(app.add_option("--allow-read", allow_read, "grant read on PATH (repeatable)"));
  repeatable(app.add_option("--allow-write", allow_write, "grant read and write on PATH (repeatable)"));
  repeatable(app.add_option("--allow-exec", allow_exec, "grant read and exec on PATH (repeatable)"));
  app.add_option("--allow-env", allow_env, "pass environment variable NAME through (repeatable)")
      ->type_name("NAME")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_option("--timeout", timeout, "kill the whole process tree after SECONDS")->type_name("SECONDS");
  app.add_option("--workspace", workspace, "the project tree: read, write and exec (default: the working directory)")
      ->type_name("DIR");
  app.add_flag("--no-workspace", no_workspace, "grant no workspace; only the explicit grants");
  app.add_option("--network", network, "none (default) or all")
      ->type_name("MODE")
      ->check(CLI::IsMember({"none", "all"}));
  app.add_option("--pin-sha256", pin_sha256, "refuse to run unless the program hashes to HEX (see `corral hash`)")
      ->type_name("HEX");
  app.add_option("--mode", mode, "read-only, workspace-write (default) or danger-full-access")
      ->type_name("MODE")
      ->check(CLI::IsMember({"read-only", "workspace-write", "danger-full-access"}));
  app.add_flag("--i-understand-danger-full-access", acknowledge_danger,
               "accept that --mode danger-full-access runs the command with no sandbox at all");
  app.add_option("--forbid-read", forbid_read, "hide PATTERN even inside granted trees (repeatable; globs, ~/)")
      ->type_name("PATTERN")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_option("--home", home, "isolated (default: an empty $HOME) or real (read-only, credentials hidden)")
      ->type_name("MODE")
      ->check(CLI::IsMember({"isolated", "real"}));
  app.add_flag("--best-effort", best_effort,
               "DANGEROUS: run even when the host cannot enforce every mechanism; the report and audit "
               "trail say what was dropped");
}

bool PolicyFlags::Any() const {
  return !allow_read.empty() || !allow_write.empty() || !allow_exec.empty() || !allow_env.empty() || timeout ||
         workspace || no_workspace || network != "none" || pin_sha256 || best_effort || mode || acknowledge_danger ||
         !forbid_read.empty() || home;
}

Result<Policy> PolicyFlags::Build(const HostContext& host) const {
  PolicySpec spec;
  spec.allow_read = allow_read;
  spec.allow_write = allow_write;
  spec.allow_exec = allow_exec;
  spec.allow_env = allow_env;
  if (timeout) {
    if (*timeout <= 0) return Error(ErrorKind::kUsage, "--timeout: must be a positive number of seconds");
    spec.timeout = std::chrono::seconds(*timeout);
  }
  spec.workspace = workspace;
  spec.no_workspace = no_workspace;
  spec.network = network == "all" ? NetworkMode::kAll : NetworkMode::kNone;
  spec.pin_sha256 = pin_sha256;
  spec.best_effort = best_effort;
  if (mode) spec.mode = *ParseMode(*mode);
  spec.acknowledge_danger = acknowledge_danger;
  spec.forbid_read = forbid_read;
  if (home) spec.home = *home == "real" ? HomeMode::kReal : HomeMode::kIsolated;
  return BuildPolicy(host, spec);
}

bool SplitAtSeparator(int argc, char** argv, std::vector<std::string>* before, std::vector<std::string>* command) {
  bool found = false;
  for (int i = 0; i < argc; ++i) {
    std::string arg = argv[i];
    if (!found && arg == "--") {
      found = true;
      continue;
    }
    (found ? command : before)->push_back(std::move(arg));
  }
  return found;
}

void PrintError(const std::string& message) { std::fprintf(stderr, "corral: %s\n", message.c_str()); }

}  // namespace corral::cli
