// corral: confine the commands and file operations of AI coding agents.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <functional>

#include "cli/commands.h"
#include "cli/refusal.h"
#include "base/exit_codes.h"

namespace {

constexpr const char* kVersion = "corral 0.1.0";

struct Subcommand {
  const char* name;
  const char* help;
  bool takes_command;  // `corral NAME [flags] -- CMD [ARGS...]`
  std::function<void(CLI::App&)> add_flags;
  std::function<int(std::vector<std::string>)> execute;
};

// The first word that is not a flag: the subcommand the user asked for.
std::string RequestedSubcommand(const std::vector<std::string>& before) {
  for (size_t i = 1; i < before.size(); ++i) {
    if (!before[i].starts_with("-")) return before[i];
  }
  return {};
}

int Main(int argc, char** argv) {
  using namespace corral::cli;
  std::vector<std::string> before, command;
  bool separated = SplitAtSeparator(argc, argv, &before, &command);

  RunCommand run;
  ExplainCommand explain;
  WrapCommand wrap;
  McpCommand mcp;
  SessionCommand session;
  CheckCommand check;
  HashCommand hash;
  SetupCommand setup;
  QuarantineCommand quarantine;
  OverlayReviewCommand changes("changes"), diff("diff"), apply("apply"), discard("discard");
  const std::vector<Subcommand> subcommands = {
      {"run", "run CMD in the sandbox: corral run [policy flags] -- CMD [ARGS...]", true,
       [&](CLI::App& app) { run.Register(app); }, [&](std::vector<std::string> cmd) { return run.Execute(std::move(cmd)); }},
      {"explain", "print the effective policy and what would be enforced: corral explain [policy flags] -- CMD", true,
       [&](CLI::App& app) { explain.Register(app); },
       [&](std::vector<std::string> cmd) { return explain.Execute(std::move(cmd)); }},
      {"wrap", "print how to confine CMD, for a harness to spawn: corral wrap [--json] [--backend B] [policy flags] "
               "-- CMD",
       true, [&](CLI::App& app) { wrap.Register(app); },
       [&](std::vector<std::string> cmd) { return wrap.Execute(std::move(cmd)); }},
      {"session", "manage session event logs: corral session new|mode|show", false,
       [&](CLI::App& app) { session.Register(app); }, [&](std::vector<std::string>) { return session.Execute(); }},
      {"quarantine", "look at and restore what the sweep quarantined: corral quarantine list|show|restore", false,
       [&](CLI::App& app) { quarantine.Register(app); }, [&](std::vector<std::string>) { return quarantine.Execute(); }},
      {"mcp", "serve the agent's confined tools over stdio to an MCP client: corral mcp [policy flags]", false,
       [&](CLI::App& app) { mcp.Register(app); }, [&](std::vector<std::string>) { return mcp.Execute(); }},
      {"changes", "list the overlay runs kept and their pending changes: corral changes [--json]", false,
       [&](CLI::App& app) { changes.Register(app); }, [&](std::vector<std::string>) { return changes.Execute(); }},
      {"diff", "show an overlay run's changes: corral diff [--stat|--json] [RUN]", false,
       [&](CLI::App& app) { diff.Register(app); }, [&](std::vector<std::string>) { return diff.Execute(); }},
      {"apply", "land an overlay run's changes in the real tree: corral apply [RUN] [PATHS...] "
                "[--include-protected PATH]",
       false, [&](CLI::App& app) { apply.Register(app); }, [&](std::vector<std::string>) { return apply.Execute(); }},
      {"discard", "drop an overlay run's changes: corral discard [RUN]", false,
       [&](CLI::App& app) { discard.Register(app); }, [&](std::vector<std::string>) { return discard.Execute(); }},
      {"check", "print what this host can enforce", false, [&](CLI::App& app) { check.Register(app); },
       [&](std::vector<std::string>) { return check.Execute(); }},
      {"setup", "make this host give the full rung: corral setup apparmor [--install]", false,
       [&](CLI::App& app) { setup.Register(app); }, [&](std::vector<std::string>) { return setup.Execute(); }},
      {"hash", "print the SHA-256 of PATH, as --pin-sha256 takes it", false,
       [&](CLI::App& app) { hash.Register(app); }, [&](std::vector<std::string>) { return hash.Execute(); }},
  };

  std::string requested = RequestedSubcommand(before);
  auto known = std::find_if(subcommands.begin(), subcommands.end(),
                            [&](const Subcommand& s) { return requested == s.name; });
  if (known == subcommands.end() && !requested.empty()) {
    std::string names;
    for (const Subcommand& sub : subcommands) names += std::string(names.empty() ? "" : ", ") + sub.name;
    PrintError("unknown subcommand '" + requested + "' (expected one of: " + names + ")");
    return corral::kExitUsage;
  }
  bool wants_help = std::any_of(before.begin(), before.end(),
                                [](const std::string& a) { return a == "-h" || a == "--help" || a == "--version"; });
  const bool is_run = known != subcommands.end() && std::string_view(known->name) == "run";
  // `explain --json` and `wrap --json` answer a bad command line on stdout
  // too, as they answer every other refusal.
  const bool answers_json = known != subcommands.end() &&
                            (std::string_view(known->name) == "explain" || std::string_view(known->name) == "wrap") &&
                            std::find(before.begin(), before.end(), "--json") != before.end();
  // A refused `run` leaves a failed record even when its flags are bad.
  auto usage_error = [&](const std::string& message, std::string_view code) {
    corral::Error error = corral::Error(corral::ErrorKind::kUsage, message).WithCode(std::string(code));
    if (is_run) return RunCommand::RefuseUsage(before, error);
    return ReportRefusal(error, answers_json ? RefusalFormat::kJson : RefusalFormat::kText);
  };
  if (known != subcommands.end() && known->takes_command && !separated && !wants_help) {
    return usage_error(std::string("corral ") + known->name + ": missing `--` before the command; usage: corral " +
                           known->name + " [policy flags] -- CMD [ARGS...]",
                       "usage_missing_separator");
  }
  // What is checked once the flags are parsed, and then the subcommand.
  auto execute = [&](const Subcommand& sub) {
    std::string name = sub.name;
    if (sub.takes_command && (command.empty() || command[0].empty())) {
      return usage_error("corral " + name + ": empty command after `--`; usage: corral " + name +
                             " [policy flags] -- CMD [ARGS...]",
                         "usage_empty_command");
    }
    if (!sub.takes_command && separated) {
      PrintError("corral " + name + " takes no `--` command");
      return corral::kExitUsage;
    }
    return sub.execute(std::move(command));
  };
  // `corral run -- CMD` with no flag at all (its policy from the config
  // files and the defaults): there is nothing to parse, and registering
  // run's flags to parse none was 0.1 ms of a run. Its flags keep the
  // values they start with, which are what parsing no flag leaves them.
  if (is_run && before.size() == 2) return execute(*known);

  CLI::App app{"corral: run a command so that it can touch only what the policy grants"};
  app.set_version_flag("--version", kVersion);
  app.require_subcommand(1);
  // Registering flags is most of corral's own start-up work: register only
  // the subcommand asked for (all of them when none is, for --help).
  std::vector<std::pair<const Subcommand*, CLI::App*>> registered;
  for (const Subcommand& sub : subcommands) {
    if (known != subcommands.end() && &sub != &*known) continue;
    CLI::App* sub_app = app.add_subcommand(sub.name, sub.help);
    sub.add_flags(*sub_app);
    registered.emplace_back(&sub, sub_app);
  }

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
  } catch (const CLI::ExtrasError& e) {
    return usage_error(e.what() + std::string(" (see corral --help)"), "usage_unknown_flag");
  } catch (const CLI::ParseError& e) {
    return usage_error(e.what() + std::string(" (see corral --help)"), "usage_bad_flag");
  }

  for (const auto& [sub, sub_app] : registered) {
    if (sub_app->parsed()) return execute(*sub);
  }
  return corral::kExitUsage;
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
