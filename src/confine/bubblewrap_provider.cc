#include "confine/bubblewrap_provider.h"

#include <algorithm>

#include "confine/mount_plan.h"
#include "confine/wrap_env.h"
#include "policy/roots.h"

namespace corral {
namespace {

// One step of the mount view: the path it mounts on and its bwrap arguments.
struct ViewOp {
  std::string target;
  std::vector<std::string> args;
};

bool Writable(const Policy& policy, const std::string& path) {
  const PathGrant* grant = policy.GrantFor(path);
  return grant != nullptr && Has(grant->access, Access::kWrite);
}

// `extra_masks`: the root-only /proc entries to hide (DiscoverProcSecrets)
// and /etc's (bwrap cannot idmap it: confine/etc_view.h).
std::vector<ViewOp> BuildView(const Policy& policy, const std::vector<MaskedPath>& extra_masks) {
  std::vector<ViewOp> ops;
  for (const PathGrant& grant : policy.grants()) {
    const std::string& path = grant.path.path;
    ops.push_back({path, {Has(grant.access, Access::kWrite) ? "--bind" : "--ro-bind", path, path}});
  }
  for (const SystemSymlink& link : policy.symlinks()) ops.push_back({link.path, {"--symlink", link.target, link.path}});
  std::vector<MaskedPath> masks = policy.masks();
  masks.insert(masks.end(), extra_masks.begin(), extra_masks.end());
  for (const MaskedPath& mask : masks) {
    if (mask.is_dir) {
      ops.push_back({mask.path, {"--perms", "0000", "--tmpfs", mask.path, "--remount-ro", mask.path}});
    } else {
      ops.push_back({mask.path, {"--ro-bind", "/dev/null", mask.path}});
    }
  }
  // Rename-proof anchors keep their grant's access; protected entries are read-only.
  for (const PinnedPath& anchor : policy.protected_paths().anchors) {
    ops.push_back({anchor.path, {Writable(policy, anchor.path) ? "--bind" : "--ro-bind", anchor.path, anchor.path}});
  }
  for (const ProtectedPath& entry : policy.protected_paths().paths) {
    if (entry.state != ProtectedPath::State::kDirectory && entry.state != ProtectedPath::State::kFile) continue;
    ops.push_back({entry.path, {"--ro-bind", entry.path, entry.path}});
  }
  ops.push_back({"/dev", {"--dev", "/dev"}});
  // Read-only, as the native view's (kernel/mounts.cc): a chmod of a kernel
  // entry there would be the host's.
  ops.push_back({"/proc", {"--proc", "/proc", "--remount-ro", "/proc"}});
  // The private tmpfs are capped as the native view caps them (bubblewrap
  // has no inode cap; its /dev/shm is a directory of the /dev tmpfs).
  const std::string size = std::to_string(policy.tmpfs_size());
  if (policy.GrantFor("/tmp") == nullptr) {
    ops.push_back({"/tmp", {"--perms", "1777", "--size", size, "--tmpfs", "/tmp"}});
  }
  const std::string& home = policy.home();
  if (home != "/" && policy.GrantFor(home) == nullptr && !IsWithin(home, "/dev") && !IsWithin(home, "/proc")) {
    ops.push_back({home, {"--perms", "0700", "--size", size, "--tmpfs", home}});
  }

  // Parents before children, as the native plan orders them.
  std::stable_sort(ops.begin(), ops.end(), [](const ViewOp& a, const ViewOp& b) { return a.target < b.target; });
  // A masked directory hides everything below it: nothing is mounted there.
  std::vector<ViewOp> view;
  for (ViewOp& op : ops) {
    bool hidden = std::any_of(masks.begin(), masks.end(), [&](const MaskedPath& mask) {
      return mask.is_dir && op.target != mask.path && IsWithin(op.target, mask.path);
    });
    if (!hidden) view.push_back(std::move(op));
  }
  return view;
}

std::vector<std::string> BubblewrapDenialSignatures() {
  return {"Permission denied", "Read-only file system", "Operation not permitted"};
}

std::vector<RunnerFailureRule> BubblewrapRunnerFailureRules() {
  RunnerFailureRule rule;
  // bwrap reports its own failures as "bwrap: ..." and exits 1.
  rule.allowed_exit_codes = {1};
  rule.fatal_signatures = {
      "bwrap: No permissions to creating new namespace",
      "bwrap: Creating new namespace failed",
      "bwrap: setting up uid map",
      "bwrap: Can't mount",
      "bwrap: Can't find source path",
      "bwrap: Can't create",
      "bwrap: Can't",
      "bwrap: execvp",
      "bwrap: Unknown option",
      "bwrap: ",
  };
  return {rule};
}

}  // namespace

std::vector<std::string> BubblewrapGaps(const Policy& policy) {
  std::vector<std::string> gaps = {
      "landlock: no Landlock ruleset; bind mounts are the only file boundary",
      "exec boundary: programs may run from any visible tree, read-only grants included (native confines "
      "execution to exec grants with Landlock)",
      "seccomp: no syscall filter (bwrap takes one only as an open descriptor, which cannot travel in an argv): "
      "io_uring, bpf, keyctl, ptrace, userfaultfd, perf_event_open and new INET sockets stay reachable, and "
      "set-user-ID and set-group-ID bits can be set in writable grants (under a root caller a setuid-root "
      "program for every local user on the host)",
      "devices: bwrap's /dev binds the host's null, zero, full, random, urandom and tty writable, so a root "
      "caller's command can chmod them for the whole host; the caller's own files on stdio (a log file, its "
      "terminal) may be chmodded too, and their modes are not put back",
      "hardening: only bwrap's own (capabilities dropped, no_new_privs); corral's securebits lock, "
      "non-dumpable init and RLIMIT_CORE=0 are not applied",
      "pins: bwrap re-resolves every path when it starts, so a grant swapped between wrap and spawn is followed, "
      "not refused",
      "masks: deny-read masks are computed at wrap time; a file created later inside a granted tree is not hidden",
  };
  bool missing_protected = std::any_of(
      policy.protected_paths().paths.begin(), policy.protected_paths().paths.end(),
      [](const ProtectedPath& entry) { return entry.state == ProtectedPath::State::kMissing; });
  if (missing_protected) {
    gaps.push_back("protected paths: no post-run sweep; a missing protected path (.git/hooks, .envrc, ...) the "
                   "command creates stays in the tree");
  }
  if (!policy.env_allow().empty()) {
    gaps.push_back("environment: --allow-env values travel in bwrap's argv (--setenv NAME VALUE), where other "
                   "processes of the same user can read them in /proc/<pid>/cmdline");
  }
  if (policy.timeout()) gaps.push_back("timeout: --timeout is not enforced (bwrap has no deadline)");
  if (policy.limits().any()) {
    gaps.push_back("limits: " + policy.limits().Describe() + " not applied (bwrap sets no rlimits and no cgroup)");
  }
  if (policy.pin_sha256()) {
    gaps.push_back("pin: --pin-sha256 is not checked; the program is resolved by path inside the sandbox");
  }
  return gaps;
}

Guarantees BubblewrapGuarantees(const Policy& policy) {
  Guarantees provided;
  provided.Add(Guarantee::kWriteBoundary);  // only writable grants are bound read-write
  provided.Add(Guarantee::kReadBoundary);   // only grants are bound; masks cover secrets inside them
  provided.Add(Guarantee::kEnvScrub);       // --clearenv, then the scrubbed --setenv list
  provided.Add(Guarantee::kPrivilegeDrop);  // --cap-drop ALL; bwrap always sets no_new_privs
  if (policy.network() == NetworkMode::kNone) {
    provided.Add(Guarantee::kNetworkBoundary);  // an empty network namespace
    // --unshare-pid and --die-with-parent. With --share-net the host's
    // abstract unix sockets stay reachable, as for native without Landlock
    // scopes, so there is no process boundary then.
    provided.Add(Guarantee::kProcessBoundary);
  }
  // Never: exec boundary (no Landlock), syscall filter (no seccomp), resource
  // limits (no RLIMIT_CORE=0, no deadline).
  return provided;
}

Result<ConfinedArgv> BubblewrapProvider::Confine(const std::vector<std::string>& argv, const Policy& policy) {
  CORRAL_TRY(CheckConfinable(argv, policy));
  CORRAL_TRY(CheckWithoutEgressProxy(policy, name()));
  if (options_.bwrap_path.empty()) return Error(ErrorKind::kUsage, "the bubblewrap backend needs a bwrap path");
  ConfinedArgv confined;
  confined.backend = std::string(name());
  confined.coverage = ConfinedArgv::Coverage::kPartial;
  confined.gaps = BubblewrapGaps(policy);
  confined.required = RequiredGuarantees(policy);
  confined.provided = BubblewrapGuarantees(policy);
  CORRAL_TRY(CheckEnforceable(confined, policy));
  std::vector<std::string>& out = confined.argv;
  out = {options_.bwrap_path, "--unshare-all"};
  if (policy.network() == NetworkMode::kAll) out.push_back("--share-net");
  out.insert(out.end(), {"--die-with-parent", "--new-session", "--cap-drop", "ALL", "--clearenv"});
  for (const std::string& entry : ScrubForWrap(policy, options_.environment)) {
    size_t eq = entry.find('=');
    out.insert(out.end(), {"--setenv", entry.substr(0, eq), entry.substr(eq + 1)});
  }
  // bwrap mounts /proc itself: its root-only entries are named from the host's.
  std::vector<MaskedPath> extra_masks;
  if (policy.masks_root_only_proc()) {
    CORRAL_ASSIGN_OR_RETURN(extra_masks, DiscoverProcSecrets(0));
  }
  if (policy.etc_view() == EtcView::kAsOthers) {
    CORRAL_ASSIGN_OR_RETURN(std::vector<MaskedPath> etc, DiscoverEtcSecrets(0));
    extra_masks.insert(extra_masks.end(), etc.begin(), etc.end());
  }
  for (ViewOp& op : BuildView(policy, extra_masks)) out.insert(out.end(), op.args.begin(), op.args.end());
  out.insert(out.end(), {"--chdir", SandboxWorkingDirectory(policy), "--"});
  out.insert(out.end(), argv.begin(), argv.end());
  confined.denial_signatures = BubblewrapDenialSignatures();
  confined.runner_failure_rules = BubblewrapRunnerFailureRules();
  return confined;
}

}  // namespace corral
