// Plan: compile(Policy, Host) -> exactly what will be enforced.
//
// Compile decides which mechanisms a run uses (namespaces, Landlock at the
// negotiated ABI, seccomp), builds the mount view, and reports honestly:
//   - Level: full (every mechanism the policy needs), degraded (best effort
//     dropped something), none (nothing is enforced);
//   - Guarantees: what the policy requires and what this plan provides;
//   - CompileReport: one entry per feature, enforced / narrowed / unavailable;
//   - Rungs: the named shape of sandbox this host gives (confine/rung.h).
// When the host cannot provide a required guarantee, Compile refuses with a
// specific error naming the mechanism and what the user can do, unless the
// policy is best-effort; then the dropped mechanisms are listed in the plan.
//
// The plan is also everything Spawn (exec/spawn.h) reads: the clone flags,
// the id maps, the mount operations with their Landlock rights, the seccomp
// filters (the command's and init's), the working directory and the
// best-effort fallback. Spawn never sees the Policy. What the plan does not
// carry is per run: argv, the scrubbed environment (from the caller's
// environ) and a pinned program's descriptor (opened and hashed only when
// the command is about to run), all in exec's Command.
#pragma once

#include <linux/filter.h>

#include <cstdint>
#include <span>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "confine/etc_view.h"
#include "confine/guarantees.h"
#include "confine/host.h"
#include "confine/mount_plan.h"
#include "confine/rung.h"
#include "kernel/cgroup.h"
#include "kernel/landlock.h"
#include "kernel/loopback.h"
#include "kernel/namespaces.h"
#include "kernel/rlimits.h"
#include "policy/policy.h"

namespace corral {

enum class Level { kFull, kDegraded, kNone };
std::string_view LevelName(Level level);

enum class FeatureStatus { kEnforced, kNarrowed, kUnavailable };
std::string_view FeatureStatusName(FeatureStatus status);

struct FeatureReport {
  std::string feature;
  FeatureStatus status = FeatureStatus::kEnforced;
  std::string detail;
};

struct CompileReport {
  std::vector<FeatureReport> features;
};

struct Mechanisms {
  bool namespaces = true;
  int landlock_abi = 0;  // 0: Landlock off
  bool seccomp = true;
};

// What a spawn that the kernel refused its namespaces (or a fresh /proc) may
// do next: nothing (the run fails), or, under --best-effort, compile again
// with CompileOptions::without_namespaces (or masked_proc) and spawn once more.
enum class Fallback { kNone, kWithoutNamespaces };

// What the caller may force off, for the best-effort retry after a runtime
// failure: a namespace the sysctls did not forbid but the kernel refused, or
// a fresh /proc the kernel refused (the host masks parts of its own; the
// masked-proc rung, confine/rung.h, then shows an empty read-only /proc).
struct CompileOptions {
  bool without_namespaces = false;
  // Under --overlay (Policy::write_view): the run's overlay directory (a
  // host path holding `upper` and `work`, made by overlay/overlay.h), which
  // the workspace's bind becomes an overlayfs over. Empty: no overlay, and a
  // policy that asks for one is refused.
  std::string overlay_dir;
  // The masked-proc rung: the best-effort retry after the kernel refused a
  // fresh /proc.
  bool masked_proc = false;
  // Under --overlay-root (Policy::overlay_roots): each root's directory
  // holding its own `upper` and `work`, in the policy's order.
  std::vector<std::string> overlay_root_dirs;
  // Under --overlay --best-effort, after the kernel refused overlayfs: each
  // overlaid tree's copied snapshot (overlay/snapshot.h), the workspace
  // first, bound writable over the tree instead of an overlayfs; each masked
  // path in a tree pinned to its placeholder in the copy; and the refusal,
  // for the report. Empty: overlayfs.
  std::vector<PinnedPath> snapshots;
  std::map<std::string, FileIdentity> snapshot_pins;
  std::string snapshot_reason;
  // A warm call's plan (run/run.h RunOptions::warm), compiled only to
  // compare its fingerprint with the warm sandbox's: root's /etc view is
  // taken as that sandbox made it (WarmSandbox::etc_view) instead of being
  // made again. kIdmapped opens no idmapped tree (no user namespace cloned
  // for its mapping); kWalked walks /etc without trying the mount first.
  // The plan then has the fingerprint a full compile on the same host
  // gives, and is PlanUse::kCompareOnly: Spawn refuses it. Unset: a plan
  // to spawn.
  std::optional<EtcViewOutcome> warm_etc_view;
};

// What a plan may be used for: spawned, or (CompileOptions::warm_etc_view)
// only compared by its fingerprint, its /etc bind left unprepared.
enum class PlanUse { kSpawn, kCompareOnly };

// The run's own cgroup (kernel/cgroup.h), when a limit needs one and the
// host offers it: made in `parent` before the spawn, removed after.
struct PlanCgroup {
  CgroupLimits limits;
  std::string parent;
  bool enable = false;  // write the parent's cgroup.subtree_control first (the hierarchy's root)
  bool wanted() const {
    return limits.pids_max.has_value() || limits.memory_max.has_value() || limits.cpu_milli.has_value();
  }
};

class Plan {
 public:
  const Mechanisms& mechanisms() const { return mechanisms_; }
  // The namespaces clone(2) creates (0 without namespaces).
  uint64_t clone_flags() const { return clone_flags_; }
  // kBringUp when the sandbox has a network namespace of its own: its lo is
  // brought up before the command runs (kernel/loopback.h).
  Loopback loopback() const { return loopback_; }
  // The listeners the child binds on the sandbox's lo besides the name
  // server's (kernel/loopback.h), which corral serves outside
  // (net/egress_proxy.h): the proxy's under --allow-host, one per
  // --allow-local port. Only with Loopback::kBringUp.
  const SandboxServices& services() const { return services_; }
  // The command's filter, empty when seccomp is off; init's own allowlist,
  // installed after it has cloned the command, empty likewise.
  std::span<const sock_filter> seccomp_filter() const { return seccomp_filter_; }
  std::span<const sock_filter> init_filter() const { return init_filter_; }
  // The command's working directory inside the sandbox, and where it starts
  // when that one cannot be entered (then "/").
  const std::string& cwd() const { return cwd_; }
  const std::string& fallback_cwd() const { return fallback_cwd_; }
  Fallback fallback() const { return fallback_; }
  const LandlockRights& landlock() const { return landlock_; }
  const MountPlan& mounts() const { return mounts_; }
  const IdMaps& id_maps() const { return id_maps_; }
  // The command's rlimits (--max-procs, --max-memory, --max-cpu-seconds,
  // --max-file-size, --max-open-files), applied before exec by
  // ApplyRlimitsChild; and the cgroup of the whole sandbox, when one is
  // used (docs/limits.md).
  const RlimitSet& rlimits() const { return rlimits_; }
  const PlanCgroup& cgroup() const { return cgroup_; }
  Level level() const { return level_; }
  Guarantees required() const { return required_; }
  Guarantees provided() const { return provided_; }
  const CompileReport& report() const { return report_; }
  // The rungs this plan stands on, lowest first ({kFull} when nothing is
  // missing): each one below full that drops a guarantee ran only because
  // the policy is best-effort.
  const std::vector<Rung>& rungs() const { return rungs_; }
  // With a mount view (namespaces): shows the protected regular file
  // `target` as a symlink to the run's private, writable copy of it in the
  // host directory `stage`, bound at `view_dir` (MountPlan::AddStagedFile).
  // False without a view or a read-only bind of `target` to replace: then
  // the file stays read-only, as before.
  bool StageFile(const std::string& target, FileIdentity pin, const PinnedPath& stage, const std::string& view_dir);
  // How root's /etc is kept (confine/etc_view.h): a warm sandbox keeps its
  // plan's, for its calls' plans (CompileOptions::warm_etc_view).
  EtcViewOutcome etc_view() const { return etc_view_; }
  PlanUse use() const { return use_; }
  // Mechanisms dropped under --best-effort, each with the reason.
  const std::vector<std::string>& dropped() const { return dropped_; }
  // The SHA-256 (hex) of everything the sandbox is set up from, but the
  // per-run working directory (cwd()): two plans with one fingerprint build
  // the same sandbox, so a warm sandbox (exec/warm_sandbox.h) started from
  // one may run a call compiled as the other. A field added to the plan
  // belongs here too.
  std::string Fingerprint() const;

 private:
  friend Result<Plan> Compile(const Policy&, const HostSupport&, const CompileOptions&);
  Mechanisms mechanisms_;
  uint64_t clone_flags_ = 0;
  Loopback loopback_ = Loopback::kLeave;
  SandboxServices services_;
  std::span<const sock_filter> seccomp_filter_;
  std::span<const sock_filter> init_filter_;
  std::string cwd_;
  std::string fallback_cwd_;
  Fallback fallback_ = Fallback::kNone;
  LandlockRights landlock_;
  MountPlan mounts_;
  IdMaps id_maps_;
  RlimitSet rlimits_;
  PlanCgroup cgroup_;
  Level level_ = Level::kNone;
  Guarantees required_;
  Guarantees provided_;
  CompileReport report_;
  std::vector<Rung> rungs_;
  std::vector<std::string> dropped_;
  EtcViewOutcome etc_view_ = EtcViewOutcome::kMasked;
  PlanUse use_ = PlanUse::kSpawn;
};

Result<Plan> Compile(const Policy& policy, const HostSupport& host, const CompileOptions& options = {});

// Whether the policy accepts `rung` by name (--accept-rung, the user
// config's accept_rung): that rung runs without --best-effort, reported.
bool AcceptsRung(const Policy& policy, Rung rung);

}  // namespace corral
