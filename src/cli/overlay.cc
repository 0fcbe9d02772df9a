// `corral changes | diff | apply | discard`: the review of an overlay run
// (`corral run --overlay`): list the runs kept, show what one changed,
// land it in the real tree (overlay/apply.h), or drop it. RUN defaults to
// the newest run kept; a first argument is RUN when a run of that id is
// kept, else it is a path.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "audit/audit.h"
#include "base/exit_codes.h"
#include "base/json_bytes.h"
#include "base/terminal.h"
#include "cli/commands.h"
#include "overlay/apply.h"
#include "overlay/changes.h"
#include "overlay/diff.h"
#include "overlay/overlay_run.h"
#include "state/state_dir.h"

namespace corral::cli {
namespace {

int Fail(const Error& error) {
  PrintError(error.ToString());
  return ExitCodeFor(error.kind());
}

Result<StateDir> OpenState() {
  Result<HostContext> host = CaptureHostContext();
  if (!host.ok()) return std::move(host).error();
  Result<StateDir> state = StateDir::Open(host->home, StateDir::Create::kNo);
  if (!state.ok() && state.error().code() != kStateDirUnsafe) {
    return Error(ErrorKind::kUsage, "no overlay run is kept (" + state.error().message() + ")").WithCode(kOverlayUnknown);
  }
  return state;
}

// RUN from the first argument when a run of that id is kept (it is then
// taken off `args`), else the newest run.
Result<std::string> PickRun(const StateDir& state, std::vector<std::string>& args) {
  if (!args.empty()) {
    std::vector<std::string> kept = OverlayRun::List(state);
    if (std::find(kept.begin(), kept.end(), args.front()) != kept.end()) {
      std::string id = args.front();
      args.erase(args.begin());
      return id;
    }
  }
  return OverlayRun::Newest(state);
}

Result<AuditTrail> Trail(const StateDir& state, const std::optional<std::string>& audit) {
  if (audit && *audit == "-") return AuditTrail::ToStderr();
  if (audit) return AuditTrail::ToFile(*audit);
  return AuditTrail::InDirectory(state.fd(), state.path());
}

Result<ChangeSet> Changes(const OverlayRun& run, UniqueFd& upper, UniqueFd& root) {
  CORRAL_ASSIGN_OR_RETURN(upper, run.Upper());
  CORRAL_ASSIGN_OR_RETURN(root, run.OpenRoot());
  return ScanChanges(upper.get(), root.get(), 0);
}

}  // namespace

void OverlayReviewCommand::Register(CLI::App& app) {
  if (verb == "changes") {
    app.add_flag("--json", json, "print JSON");
    return;
  }
  app.add_option("args", args, verb == "apply" ? "[RUN] [PATHS...]: the run (default: the newest) and the paths "
                                                 "to apply (default: all its changes)"
                                               : "[RUN]: the run (default: the newest)");
  if (verb == "diff") {
    app.add_flag("--stat", stat, "one line a change");
    app.add_flag("--json", json, "the changes as JSON");
  }
  if (verb == "apply") {
    app.add_option("--include-protected", include_protected,
                   "apply this protected path (or what is below it) too: .git/hooks, rc files, editor and agent "
                   "config run code outside the sandbox; repeatable")
        ->type_name("PATH")
        ->expected(1)
        ->allow_extra_args(false)
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    app.add_flag("--json", json, "print what happened to each change as JSON");
  }
  if (verb == "apply" || verb == "discard") {
    app.add_option("--audit", audit, "append the audit records to FILE, or - for stderr (default: the state "
                                     "directory's audit.jsonl)")
        ->type_name("FILE");
  }
}

int OverlayReviewCommand::Execute() const {
  Result<StateDir> state = OpenState();
  if (!state.ok()) return Fail(state.error());
  std::vector<std::string> rest = args;

  if (verb == "changes") {
    nlohmann::json out = nlohmann::json::array();
    for (const std::string& id : OverlayRun::List(*state)) {
      Result<OverlayRun> run = OverlayRun::Open(*state, id, OverlayRun::Wait::kNo);
      if (!run.ok()) {
        if (json) {
          out.push_back({{"run", id}, {"error", run.error().message()}});
        } else {
          std::printf("%s  (%s)\n", id.c_str(), run.error().message().c_str());
        }
        continue;
      }
      Result<size_t> pending = PendingChanges(*run);
      if (json) {
        nlohmann::json one = {{"run", id}, {"root", run->root()}};
        if (pending.ok()) one["pending"] = *pending;
        else one["error"] = pending.error().message();
        out.push_back(one);
      } else if (pending.ok()) {
        std::printf("%s  %s  %zu pending change(s)\n", id.c_str(), EscapeControls(run->root()).c_str(), *pending);
      } else {
        std::printf("%s  %s  (%s)\n", id.c_str(), EscapeControls(run->root()).c_str(), pending.error().message().c_str());
      }
    }
    if (json) std::printf("%s\n", EncodeBytes(out).dump().c_str());
    return 0;
  }

  Result<std::string> id = PickRun(*state, rest);
  if (!id.ok()) return Fail(id.error());
  Result<OverlayRun> run = OverlayRun::Open(*state, *id, OverlayRun::Wait::kNo);
  if (!run.ok()) return Fail(run.error());

  if (verb == "diff") {
    if (!rest.empty()) return Fail(Error(ErrorKind::kUsage, "usage: corral diff [--stat|--json] [RUN]"));
    UniqueFd upper, root;
    Result<ChangeSet> changes = Changes(*run, upper, root);
    if (!changes.ok()) return Fail(changes.error());
    std::fflush(stdout);
    if (json) {
      std::fputs(RenderJson(*id, *changes).c_str(), stdout);
    } else if (stat) {
      std::fputs(RenderStat(*changes).c_str(), stdout);
    } else if (Result<void> written = WriteDiff(upper.get(), root.get(), *changes, STDOUT_FILENO); !written.ok()) {
      return Fail(written.error());
    }
    return 0;
  }

  Result<AuditTrail> trail = Trail(*state, audit);
  if (!trail.ok()) return Fail(trail.error());

  if (verb == "discard") {
    if (!rest.empty()) return Fail(Error(ErrorKind::kUsage, "usage: corral discard [RUN]"));
    std::string root = run->root();
    Result<void> removed = run->Remove();
    if (!removed.ok()) return Fail(removed.error());
    trail->Record(AuditEvent("discarded").Set("overlay_run", *id).Set("root", root));
    PrintError("discarded overlay run " + *id + "; the real tree was not touched");
    return 0;
  }

  ApplyOptions options;
  for (const std::string& path : rest) {
    Result<std::string> relative = RelativeSelection(run->root(), path);
    if (!relative.ok()) return Fail(relative.error());
    options.paths.push_back(*relative);
  }
  for (const std::string& path : include_protected) {
    Result<std::string> relative = RelativeSelection(run->root(), path);
    if (!relative.ok()) return Fail(relative.error());
    options.include_protected.push_back(*relative);
  }
  Result<ApplyReport> report = ApplyChanges(*run, options);
  if (!report.ok()) return Fail(report.error());
  // The trail names paths and outcomes, never contents.
  std::vector<std::string> landed, held;
  nlohmann::json out = nlohmann::json::array();
  for (const AppliedChange& change : report->changes) {
    if (change.outcome == ApplyOutcome::kNotSelected) continue;
    bool ok = change.outcome == ApplyOutcome::kApplied || change.outcome == ApplyOutcome::kAlreadyApplied;
    (ok ? landed : held).push_back(change.path);
    nlohmann::json one = {{"path", change.path}, {"outcome", ApplyOutcomeName(change.outcome)}};
    if (!change.detail.empty()) one["detail"] = change.detail;
    out.push_back(one);
    if (!ok) {
      PrintError("apply: " + std::string(ApplyOutcomeName(change.outcome)) + ": " + EscapeControls(change.path) +
                 ": " + change.detail);
    }
  }
  trail->Record(AuditEvent("applied").Set("overlay_run", *id).Set("root", run->root()).Set("paths", landed).Set("held_back", held));
  if (json) std::printf("%s\n", EncodeBytes(out).dump().c_str());
  PrintError("apply: overlay run " + *id + ": " + std::to_string(report->landed) + " change(s) in the real tree, " +
             std::to_string(report->held_back) + " held back" +
             (report->held_back == 0 ? "" : " (the run is kept: fix them and apply again, or discard it)"));
  return report->held_back == 0 ? 0 : kExitChangesHeldBack;
}

}  // namespace corral::cli
