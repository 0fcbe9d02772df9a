// `corral session new|mode|show`: the append-only session event log from the
// command line. A session's last sandbox/mode event is the mode `corral run
// --session ID` uses when no --mode is given, and its cwd is the workspace.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "base/terminal.h"
#include "cli/commands.h"
#include "base/exit_codes.h"
#include "state/session_log.h"

namespace corral::cli {
namespace {

int Fail(const Error& error) {
  PrintError(error.ToString());
  return ExitCodeFor(error.kind());
}

}  // namespace

void SessionCommand::Register(CLI::App& app) {
  app.add_option("action", action, "new: start a session; mode: record a sandbox/mode event; show: print it")
      ->required()
      ->check(CLI::IsMember({"new", "mode", "show"}));
  app.add_option("args", args, "mode: ID MODE; show: ID");
  app.add_option("--cwd", cwd, "new: the session's working directory, its workspace (default: here)")->type_name("DIR");
  app.add_option("--id", id, "new: the session id (default: a random one)")->type_name("ID");
  app.add_option("--source", source, "mode: who changed the mode: user (default), delegation or escalation")
      ->check(CLI::IsMember({"user", "delegation", "escalation"}));
  app.add_flag("--json", json, "show: print JSON");
}

int SessionCommand::Execute() const {
  Result<SessionStore> store = SessionStore::OpenDefault();
  if (!store.ok()) return Fail(store.error());
  if (action == "new") {
    if (!args.empty()) return Fail(Error(ErrorKind::kUsage, "session new takes no arguments (use --cwd and --id)"));
    Result<HostContext> host = CaptureHostContext();
    if (!host.ok()) return Fail(host.error());
    std::string session_id;
    if (id) {
      session_id = *id;
    } else {
      Result<std::string> fresh = NewSessionId();
      if (!fresh.ok()) return Fail(fresh.error());
      session_id = *fresh;
    }
    std::string dir = cwd.value_or(host->cwd);
    Result<PinnedPath> pinned = PinPath(dir, "--cwd");
    if (!pinned.ok()) return Fail(pinned.error());
    Result<Session> session = store->Create(session_id, pinned->path);
    if (!session.ok()) return Fail(session.error());
    std::printf("%s\n", session->id().c_str());
    return 0;
  }
  size_t want = action == "mode" ? 2 : 1;
  if (args.size() != want) {
    return Fail(Error(ErrorKind::kUsage, action == "mode" ? "usage: corral session mode ID MODE [--source S]"
                                                          : "usage: corral session show ID [--json]"));
  }
  Result<Session> session = store->Load(args[0]);
  if (!session.ok()) return Fail(session.error());
  if (action == "mode") {
    std::optional<Mode> mode = ParseMode(args[1]);
    if (!mode) {
      return Fail(Error(ErrorKind::kUsage, "unknown mode " + args[1] +
                                               " (read-only, workspace-write or danger-full-access)"));
    }
    Result<void> recorded = session->RecordMode(*mode, *ParseModeSource(source));
    if (!recorded.ok()) return Fail(recorded.error());
    return 0;
  }
  std::optional<Mode> mode = session->mode();
  if (json) {
    nlohmann::json events = nlohmann::json::array();
    for (const SessionEvent& event : session->events()) events.push_back(nlohmann::json::parse(event.ToJsonLine()));
    nlohmann::json out = {{"id", session->id()},
                          {"path", session->path()},
                          {"cwd", session->cwd()},
                          {"mode", mode ? nlohmann::json(ModeName(*mode)) : nlohmann::json(nullptr)},
                          {"events", events}};
    std::printf("%s\n", out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    return 0;
  }
  std::printf("session  %s\nlog      %s\ncwd      %s\nmode     %s\nevents   %zu\n", EscapeControls(session->id()).c_str(),
              EscapeControls(session->path()).c_str(), EscapeControls(session->cwd()).c_str(),
              mode ? std::string(ModeName(*mode)).c_str() : "(none: the default applies)", session->events().size());
  return 0;
}

}  // namespace corral::cli
