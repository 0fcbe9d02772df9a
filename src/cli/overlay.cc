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
#include "policy/path.h"
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

Result<ChangeSet> Changes(const OverlayRun& run, size_t index, UniqueFd& upper, UniqueFd& root) {
  CORRAL_ASSIGN_OR_RETURN(upper, run.Upper(index));
  CORRAL_ASSIGN_OR_RETURN(root, run.OpenRoot(index));
  return ScanChanges(upper.get(), root.get(), 0);
}

// How root `index`'s paths are shown: relative for the workspace, under
// their root's absolute path for an --overlay-root.
std::string Shown(const OverlayRun& run, size_t index, const std::string& path) {
  return index == 0 ? path : run.roots()[index].path + "/" + path;
}

// A path the user named: which root it is in (an --overlay-root when it is
// absolute and inside one, else the workspace) and its path there.
Result<std::pair<size_t, std::string>> Select(const OverlayRun& run, const std::string& path) {
  for (size_t i = 1; i < run.roots().size(); ++i) {
    if (!path.empty() && path[0] == '/' && IsWithin(path, run.roots()[i].path)) {
      CORRAL_ASSIGN_OR_RETURN(std::string relative, RelativeSelection(run.roots()[i].path, path));
      return std::make_pair(i, relative);
    }
  }
  CORRAL_ASSIGN_OR_RETURN(std::string relative, RelativeSelection(run.root(), path));
  return std::make_pair(size_t{0}, relative);
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
    ChangeSet shown;  // every root's, an --overlay-root's paths under its root
    std::fflush(stdout);
    for (size_t i = 0; i < run->roots().size(); ++i) {
      UniqueFd upper, root;
      Result<ChangeSet> changes = Changes(*run, i, upper, root);
      if (!changes.ok()) return Fail(changes.error());
      if (!json && !stat) {
        Result<void> written =
            WriteDiff(upper.get(), root.get(), *changes, STDOUT_FILENO, i == 0 ? std::string() : run->roots()[i].path);
        if (!written.ok()) return Fail(written.error());
        continue;
      }
      shown.upper_bytes += changes->upper_bytes;
      for (Change& change : changes->changes) {
        change.path = Shown(*run, i, change.path);
        if (!change.renamed_from.empty()) change.renamed_from = Shown(*run, i, change.renamed_from);
        shown.changes.push_back(std::move(change));
      }
    }
    if (json) {
      std::fputs(RenderJson(*id, shown).c_str(), stdout);
    } else if (stat) {
      std::fputs(RenderStat(shown).c_str(), stdout);
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

  // One apply per root, each on its own pinned tree; the paths named pick
  // the roots (none named: every change of every root).
  std::vector<ApplyOptions> options(run->roots().size());
  std::vector<bool> selected(run->roots().size(), rest.empty());
  for (const std::string& path : rest) {
    Result<std::pair<size_t, std::string>> picked = Select(*run, path);
    if (!picked.ok()) return Fail(picked.error());
    options[picked->first].paths.push_back(picked->second);
    selected[picked->first] = true;
  }
  for (const std::string& path : include_protected) {
    Result<std::pair<size_t, std::string>> picked = Select(*run, path);
    if (!picked.ok()) return Fail(picked.error());
    options[picked->first].include_protected.push_back(picked->second);
  }
  ApplyReport all;
  for (size_t i = 0; i < run->roots().size(); ++i) {
    if (!selected[i]) continue;
    Result<ApplyReport> one = ApplyChanges(*run, i, options[i]);
    if (!one.ok()) return Fail(one.error());
    for (AppliedChange& change : one->changes) {
      change.path = Shown(*run, i, change.path);
      all.changes.push_back(std::move(change));
    }
    all.landed += one->landed;
    all.held_back += one->held_back;
  }
  const ApplyReport* report = &all;
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
  AuditEvent applied("applied");
  applied.Set("overlay_run", *id).Set("root", run->root()).Set("paths", landed).Set("held_back", held);
  if (run->roots().size() > 1) {
    std::vector<std::string> roots;
    for (const OverlayRoot& root : run->roots()) roots.push_back(root.path);
    applied.Set("roots", roots);
  }
  trail->Record(applied);
  if (json) std::printf("%s\n", EncodeBytes(out).dump().c_str());
  PrintError("apply: overlay run " + *id + ": " + std::to_string(report->landed) + " change(s) in the real tree, " +
             std::to_string(report->held_back) + " held back" +
             (report->held_back == 0 ? "" : " (the run is kept: fix them and apply again, or discard it)"));
  return report->held_back == 0 ? 0 : kExitChangesHeldBack;
}

}  // namespace corral::cli
