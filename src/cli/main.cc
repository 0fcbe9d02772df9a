// corral: confine the commands and file operations of AI coding agents.
#include <CLI/CLI.hpp>
#include <cstdio>

#include "cli/commands.h"
#include "exec/exit_codes.h"

namespace {

constexpr const char* kVersion = "corral 0.1.0";

int Main(int argc, char** argv) {
  using namespace corral::cli;
  std::vector<std::string> before, command;
  bool separated = SplitAtSeparator(argc, argv, &before, &command);

  CLI::App app{"corral: run a command so that it can touch only what the policy grants"};
  app.set_version_flag("--version", kVersion);
  app.require_subcommand(1);
  RunCommand run;
  ExplainCommand explain;
  CheckCommand check;
  HashCommand hash;
  WrapCommand wrap;
  CLI::App* run_app = app.add_subcommand("run", "run CMD in the sandbox: corral run [grants] -- CMD [ARGS...]");
  run.Register(*run_app);
  CLI::App* explain_app = app.add_subcommand("explain", "print the effective policy and what would be enforced");
  explain.Register(*explain_app);
  CLI::App* wrap_app = app.add_subcommand("wrap", "print how to confine CMD, for a harness to spawn: corral wrap "
                                                  "[--json] [--backend B] [grants] -- CMD [ARGS...]");
  wrap.Register(*wrap_app);
  CLI::App* check_app = app.add_subcommand("check", "print what this host can enforce");
  check.Register(*check_app);
  CLI::App* hash_app = app.add_subcommand("hash", "print the SHA-256 of PATH, as --pin-sha256 takes it");
  hash.Register(*hash_app);

  // CLI11 wants argv in reverse order after the program name.
  std::vector<std::string> args(before.rbegin(), before.rend() - 1);
  try {
    app.parse(args);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    PrintError(e.what() + std::string(" (see corral --help)"));
    return corral::kExitUsage;
  }

  bool takes_command = run_app->parsed() || explain_app->parsed() || wrap_app->parsed();
  if (takes_command) {
    std::string name = run_app->parsed() ? "run" : explain_app->parsed() ? "explain" : "wrap";
    if (!separated) {
      PrintError("corral " + name + ": missing `--` before the command; usage: corral " + name +
                 " [grants] -- CMD [ARGS...]");
      return corral::kExitUsage;
    }
    if (command.empty() || command[0].empty()) {
      PrintError("corral " + name + ": empty command after `--`; usage: corral " + name + " [grants] -- CMD [ARGS...]");
      return corral::kExitUsage;
    }
  } else if (separated) {
    PrintError("`--` is only used by `corral run`, `corral explain` and `corral wrap`");
    return corral::kExitUsage;
  }
  if (run_app->parsed()) return run.Execute(std::move(command));
  if (explain_app->parsed()) return explain.Execute(std::move(command));
  if (wrap_app->parsed()) return wrap.Execute(std::move(command));
  if (check_app->parsed()) return check.Execute();
  return hash.Execute();
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return Main(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "corral: internal error: %s\n", e.what());
    return corral::kExitInternal;
  }
}
