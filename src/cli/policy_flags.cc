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
  app.add_flag("--best-effort", best_effort,
               "DANGEROUS: run even when the host cannot enforce every mechanism; the report and audit "
               "trail say what was dropped");
}

Result<Policy> PolicyFlags::Build(const HostContext& host) const {
  if (workspace && no_workspace) {
    return Error(ErrorKind::kUsage, "--workspace and --no-workspace cannot be combined");
  }
  PolicyBuilder builder(host);
  for (const std::string& path : allow_read) builder.AllowRead(path);
  for (const std::string& path : allow_write) builder.AllowWrite(path);
  for (const std::string& path : allow_exec) builder.AllowExec(path);
  for (const std::string& name : allow_env) builder.AllowEnv(name);
  if (timeout) {
    if (*timeout <= 0) return Error(ErrorKind::kUsage, "--timeout: must be a positive number of seconds");
    builder.Timeout(std::chrono::seconds(*timeout));
  }
  if (workspace) builder.Workspace(*workspace);
  if (no_workspace) builder.NoWorkspace();
  builder.Network(network == "all" ? NetworkMode::kAll : NetworkMode::kNone);
  if (pin_sha256) builder.PinSha256(*pin_sha256);
  builder.BestEffort(best_effort);
  return builder.Build();
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
