#include "confine/plan.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <optional>

#include "base/invariant.h"
#include "base/sha256.h"
#include "base/mutant.h"
#include "confine/etc_view.h"
#include "confine/sandbox_hosts.h"
#include "kernel/seccomp.h"
#include "net/hosts_file.h"
#include "policy/egress_capture.h"
#include "policy/tmpfs_size.h"

namespace corral {
namespace {

// The one-line fix for missing user namespaces on this host.
std::string UserNamespacesFix(const HostSupport& host) {
  if (host.apparmor_restricts_userns) {
    return "Load corral's AppArmor profile (`sudo corral setup apparmor --install`, then the apparmor_parser "
           "command it prints), or set kernel.apparmor_restrict_unprivileged_userns=0";
  }
  if (!host.container.empty()) {
    return "Give the container user namespaces (docs/hosts.md: a seccomp profile that allows unshare and clone "
           "with CLONE_NEWUSER, or a pod with hostUsers: false)";
  }
  return "Allow unprivileged user namespaces on this host";
}

std::string LandlockHelp() {
  return "Landlock needs Linux 5.13 or newer with \"landlock\" in the lsm= boot parameter "
         "(CONFIG_SECURITY_LANDLOCK)";
}

// "443", "80, 443".
std::string PortList(const std::vector<uint16_t>& ports) {
  std::string text;
  for (uint16_t port : ports) text += (text.empty() ? "" : ", ") + std::to_string(port);
  return text;
}

// The resource limits (docs/limits.md): each an rlimit of the command, and
// processes and memory also a cgroup limit of the whole sandbox where the
// host offers one. The CPU share is cpu.max of that cgroup alone: refused
// without a cpu controller (dropped under --best-effort). Global root is exempt from RLIMIT_NPROC: as root a process
// limit holds only through the pids controller, so without one it is refused
// (dropped under --best-effort). The sandbox's init counts as one process.
template <typename Unavailable, typename Feature>
Result<void> CompileLimits(const Policy& policy, const CgroupOffer& offer, RlimitSet& rlimits, PlanCgroup& cgroup,
                           Unavailable& unavailable, Feature& feature) {
  const ResourceLimits& limits = policy.limits();
  std::vector<std::string> parts;
  bool narrowed = false;
  if (limits.procs) {
    const uint64_t with_init = *limits.procs + 1;
    const bool root = policy.host().uid == 0;
    if (!root) rlimits.Add(RLIMIT_NPROC, with_init);
    if (offer.pids) {
      cgroup.limits.pids_max = with_init;
      parts.push_back(std::to_string(*limits.procs) + " processes: pids.max of the run's cgroup" +
                      (root ? "" : " and RLIMIT_NPROC"));
    } else if (root) {
      CORRAL_TRY(unavailable("process limit",
                             "--max-procs as root needs the pids controller of a cgroup (global root is exempt from "
                             "RLIMIT_NPROC), and here " + offer.detail,
                             "Run corral as an unprivileged user (RLIMIT_NPROC holds), or on a host whose cgroup v2 "
                             "hierarchy offers the pids controller (docs/limits.md)",
                             std::nullopt));
      parts.push_back("processes: not limited (dropped under --best-effort: root and no pids controller)");
      narrowed = true;
    } else {
      parts.push_back(std::to_string(*limits.procs) +
                      " processes: RLIMIT_NPROC, counted per uid (in the sandbox's user namespace; without one, "
                      "with every process of that uid on the host); no pids cgroup: " + offer.detail);
    }
  }
  if (limits.memory_bytes) {
    rlimits.Add(RLIMIT_AS, *limits.memory_bytes);
    if (offer.memory) {
      cgroup.limits.memory_max = *limits.memory_bytes;
      parts.push_back("memory " + TmpfsSizeText(*limits.memory_bytes) +
                      ": each process's address space (RLIMIT_AS) and the whole sandbox (memory.max, no swap)");
    } else {
      parts.push_back("memory " + TmpfsSizeText(*limits.memory_bytes) +
                      ": each process's address space only (RLIMIT_AS); the sandbox as a whole is not bounded (" +
                      offer.detail + ")");
      narrowed = true;
    }
  }
  if (limits.cpu_seconds) {
    rlimits.Add(RLIMIT_CPU, *limits.cpu_seconds, *limits.cpu_seconds + 1);
    parts.push_back(std::to_string(*limits.cpu_seconds) + " CPU seconds per process (RLIMIT_CPU)");
  }
  if (limits.file_size_bytes) {
    rlimits.Add(RLIMIT_FSIZE, *limits.file_size_bytes);
    parts.push_back("files up to " + TmpfsSizeText(*limits.file_size_bytes) + " (RLIMIT_FSIZE)");
  }
  if (limits.open_files) {
    rlimits.Add(RLIMIT_NOFILE, *limits.open_files);
    parts.push_back(std::to_string(*limits.open_files) + " open files per process (RLIMIT_NOFILE)");
  }
  if (limits.milli_cpus) {
    // A rate of the whole sandbox: no rlimit holds it, only cpu.max.
    if (offer.cpu) {
      cgroup.limits.cpu_milli = *limits.milli_cpus;
      parts.push_back(MilliCpusText(*limits.milli_cpus) + " CPUs for the whole sandbox (cpu.max " +
                      CpuMaxText(*limits.milli_cpus) + " of the run's cgroup)");
    } else {
      CORRAL_TRY(unavailable("CPU share limit",
                             "--max-cpus needs the cpu controller of a cgroup (no rlimit limits a rate), and here " +
                                 offer.detail,
                             "Run corral on a host whose cgroup v2 hierarchy offers the cpu controller to corral's "
                             "cgroup (docs/limits.md)",
                             std::nullopt));
      parts.push_back("CPUs: not limited (dropped under --best-effort: no cpu controller)");
      narrowed = true;
    }
  }
  if (cgroup.wanted()) {
    cgroup.parent = offer.parent;
    cgroup.enable = offer.enable;
  }
  std::string detail;
  for (const std::string& part : parts) detail += (detail.empty() ? "" : "; ") + part;
  if (detail.empty()) detail = "none asked; the host gives rlimits, and " + offer.detail;
  feature("limits", narrowed ? FeatureStatus::kNarrowed : FeatureStatus::kEnforced, detail);
  return {};
}

}  // namespace

std::string_view LevelName(Level level) {
  switch (level) {
    case Level::kFull: return "full";
    case Level::kDegraded: return "degraded";
    case Level::kNone: return "none";
  }
  return "none";
}

std::string_view FeatureStatusName(FeatureStatus status) {
  switch (status) {
    case FeatureStatus::kEnforced: return "enforced";
    case FeatureStatus::kNarrowed: return "narrowed";
    case FeatureStatus::kUnavailable: return "unavailable";
  }
  return "unavailable";
}

bool Plan::StageFile(const std::string& target, FileIdentity pin, const PinnedPath& stage, const std::string& view_dir) {
  if (!mechanisms_.namespaces) return false;
  uint64_t landlock = LandlockFsAccess(landlock_, Access::kRead | Access::kWrite, true);
  return mounts_.AddStagedFile(target, pin, stage, view_dir, landlock);
}

bool AcceptsRung(const Policy& policy, Rung rung) {
  const std::vector<std::string>& names = policy.accepted_rungs();
  return std::find(names.begin(), names.end(), RungName(rung)) != names.end();
}

Result<Plan> Compile(const Policy& policy, const HostSupport& host, const CompileOptions& options) {
  Plan plan;
  const bool best_effort = policy.enforcement() == Enforcement::kBestEffort;
  // --accept-rung NAME: that rung alone runs without --best-effort.
  auto accepted = [&](std::optional<Rung> rung) {
    return rung && AcceptsRung(policy, *rung);
  };
  const bool network_none = policy.network() == NetworkMode::kNone;
  // --allow-port: the host's network, with TCP connect on those ports alone.
  const EgressRules& egress = policy.egress();
  const bool host_ports = egress.host_ports();
  const bool isolated = network_none && !host_ports;  // no network but what corral serves
  // `rung`: the rung the run would stand on without `mechanism`, named in
  // the refusal so that docs/hosts.md can say what it keeps.
  auto unavailable = [&](std::string mechanism, std::string why, std::string fix,
                         std::optional<Rung> rung) -> Result<void> {
    if (!best_effort && MutantActive(Mutant::kPlanFailClosed)) return {};
    if (!best_effort && !accepted(rung)) {
      return Error(ErrorKind::kUnsupported,
                   mechanism + ": " + why + ". The command was not run. " + fix +
                       ", or pass --best-effort to run without it" +
                       (rung ? " (rung " + std::string(RungName(*rung)) + ", see docs/hosts.md), or --accept-rung " +
                                   std::string(RungName(*rung)) + " for that rung alone."
                             : std::string(".")));
    }
    if (!MutantActive(Mutant::kDegradedReport)) plan.dropped_.push_back(mechanism + ": " + why);
    return {};
  };
  auto feature = [&](std::string name, FeatureStatus status, std::string detail) {
    plan.report_.features.push_back({std::move(name), status, std::move(detail)});
  };

  // Namespaces: user, mount, PID, IPC, UTS, and network unless granted.
  plan.mechanisms_.namespaces = true;
  if (options.without_namespaces) {
    plan.mechanisms_.namespaces = false;
    plan.dropped_.push_back("namespaces: the kernel refused to create them at spawn time");
  } else if (!host.user_namespaces) {
    CORRAL_TRY(unavailable("namespaces", "user namespaces are not available (" + host.user_namespaces_detail + ")",
                           UserNamespacesFix(host), Rung::kNoUserNamespaces));
    plan.mechanisms_.namespaces = false;
  }
  // Landlock, at every right the kernel knows.
  if (host.landlock_abi < 1) {
    CORRAL_TRY(unavailable("landlock", "this kernel does not offer Landlock", LandlockHelp(), Rung::kNoLandlock));
  } else {
    plan.mechanisms_.landlock_abi = host.landlock_abi;
  }
  if (!host.seccomp) {
    CORRAL_TRY(unavailable("seccomp", "this kernel does not accept seccomp filters",
                           "Use a kernel built with CONFIG_SECCOMP_FILTER", std::nullopt));
    plan.mechanisms_.seccomp = false;
  }

  const Mechanisms& m = plan.mechanisms_;
  if (!m.namespaces) plan.rungs_.push_back(Rung::kNoUserNamespaces);
  const bool masked_proc = options.masked_proc && m.namespaces;
  if (masked_proc) plan.rungs_.push_back(Rung::kMaskedProc);
  if (m.landlock_abi == 0) {
    plan.rungs_.push_back(Rung::kNoLandlock);
  } else if (m.landlock_abi <= 3) {
    plan.rungs_.push_back(Rung::kLandlock1To3);
  } else if (m.landlock_abi <= 5) {
    plan.rungs_.push_back(Rung::kLandlock4To5);
  }
  if (plan.rungs_.empty()) plan.rungs_.push_back(Rung::kFull);
  // Without namespaces there is no mount view: say exactly what that drops,
  // and never drop an explicit instruction to hide.
  if (!m.namespaces) {
    if (!policy.UnixSockets().empty()) {
      return Error(ErrorKind::kUnsupported,
                   "namespaces: --allow-unix needs the mount view, which needs user namespaces; without it corral "
                   "refuses every unix socket the command would open (the host's others would all be reachable). "
                   "The command was not run.");
    }
    if (!policy.forbid_patterns().empty()) {
      return Error(ErrorKind::kUnsupported,
                   "namespaces: forbid_read needs the mount view, which needs user namespaces; --best-effort "
                   "cannot drop an instruction to hide paths. The command was not run.");
    }
    size_t bound = 0, missing = 0;
    for (const ProtectedPath& p : policy.protected_paths().paths) {
      bound += p.state == ProtectedPath::State::kDirectory || p.state == ProtectedPath::State::kFile;
      missing += p.state == ProtectedPath::State::kMissing;
    }
    plan.dropped_.push_back("mount view: " + std::to_string(policy.masks().size()) + " masked secrets " +
                            (m.landlock_abi > 0 ? "refused by Landlock instead of hidden (they exist, EACCES), "
                                                : "kept only by their own permissions (unreadable to the caller), ") +
                            std::to_string(bound) + " protected paths writable (" + std::to_string(missing) +
                            " missing ones still swept), no private /tmp or $HOME (both denied instead), the host's "
                            "/proc and /dev invisible but not replaced");
    // The read-only binds were what kept chmod off the trees outside the
    // grants: Landlock has no right for it.
    plan.dropped_.push_back(std::string("file metadata: Landlock has no right for chmod or timestamps, so the command "
                                        "can change the mode and times of any file the caller owns, outside the "
                                        "grants too") +
                            (policy.host().uid == 0 ? " (for root, every root-owned file of the host)" : ""));
    if (policy.host().uid == 0) {
      plan.dropped_.push_back("/etc as others see it: its root-only files (/etc/shadow, ssh host keys) are left out "
                              "of Landlock's rules (refused, EACCES), not hidden");
    }
    plan.dropped_.push_back("pid namespace: processes the command starts can outlive the run and see host processes");
    if (m.landlock_abi > 0 && m.landlock_abi < 3) {
      plan.dropped_.push_back("truncate: Landlock ABI " + std::to_string(m.landlock_abi) +
                              " does not handle it, and without the read-only binds any file the caller may write "
                              "can be truncated, inside the grants or not");
    }
    if (isolated) plan.dropped_.push_back("network namespace: only Landlock (TCP, ABI 4) and seccomp deny the network");
    plan.dropped_.push_back("unix sockets: only socketpair(2); socket(AF_UNIX) is refused, since no mount view hides "
                            "the host's sockets (Docker's, D-Bus's, agents')");
    if (host_ports) {
      plan.dropped_.push_back("--allow-dns: no sandbox /etc/hosts, so the host's /etc/hosts and resolver answer inside "
                              "(every name the host resolves, not only the --allow-dns ones)");
    }
  }
  // With the sandbox's own empty network namespace, that namespace is the
  // network boundary: INET sockets reach only its lo, so TCP and UDP on
  // 127.0.0.1 work inside and nothing leaves. In a rung without one,
  // seccomp refuses INET sockets and Landlock (ABI 4) denies TCP.
  // Under --allow-port the host's network is shared, seccomp allows TCP
  // sockets alone and Landlock's TCP rules name the ports (ABI 4).
  const bool own_network_namespace = isolated && m.namespaces;
  const InetSockets inet = host_ports                                   ? InetSockets::kTcpOnly
                           : !network_none || own_network_namespace ? InetSockets::kStreamAndDatagram
                                                                    : InetSockets::kNone;
  if (host_ports && m.landlock_abi < 4) {
    CORRAL_TRY(unavailable("landlock network",
                           "--allow-port needs Landlock's TCP rules (ABI 4, Linux 6.7) and this kernel has ABI " +
                               std::to_string(m.landlock_abi) + "; without them every TCP port of every host is open",
                           "Use a newer kernel, or --allow-host (corral's proxy) instead", Rung::kLandlock1To3));
  }
  const TcpAccess tcp = host_ports                                 ? TcpAccess::kConnectPorts
                        : network_none && !own_network_namespace ? TcpAccess::kDenied
                                                                 : TcpAccess::kUnhandled;
  plan.landlock_ = LandlockRightsFor(m.landlock_abi, tcp, egress.connect_ports);
  plan.mounts_ = BuildMountPlan(policy, plan.landlock_);
  // --overlay: the command must never write the real tree, so there is no
  // rung without the mount view, not even under --best-effort.
  if (policy.write_view() == WriteView::kOverlay) {
    if (!m.namespaces) {
      return Error(ErrorKind::kUnsupported,
                   "--overlay: the overlay needs user and mount namespaces, and this run has none; --best-effort "
                   "cannot drop it (the command would write the real tree). The command was not run.");
    }
    if (!policy.workspace()) {
      return Error(ErrorKind::kUsage, "--overlay: the run has no workspace to overlay. The command was not run.");
    }
    if (options.overlay_dir.empty()) {
      return Error(ErrorKind::kInternal, "--overlay: no overlay directory was prepared. The command was not run.");
    }
    if (options.overlay_root_dirs.size() != policy.overlay_roots().size()) {
      return Error(ErrorKind::kInternal, "--overlay-root: no overlay directory was prepared. The command was not run.");
    }
    if (options.snapshots.empty()) {
      CORRAL_TRY(plan.mounts_.OverlayWorkspace(policy.workspace()->path, options.overlay_dir));
      for (size_t i = 0; i < policy.overlay_roots().size(); ++i) {
        CORRAL_TRY(plan.mounts_.OverlayRoot(policy.overlay_roots()[i].path, options.overlay_root_dirs[i]));
      }
      feature("overlay", FeatureStatus::kEnforced, "overlayfs: the command's writes go to the run's upper layer");
    } else {
      // The copied snapshot (overlay/snapshot.h): only under --best-effort.
      if (options.snapshots.size() != policy.overlay_roots().size() + 1 ||
          policy.enforcement() != Enforcement::kBestEffort) {
        return Error(ErrorKind::kInternal, "--overlay: no copied snapshot was prepared. The command was not run.");
      }
      CORRAL_TRY(plan.mounts_.SnapshotWorkspace(policy.workspace()->path, options.snapshots[0], options.snapshot_pins));
      for (size_t i = 0; i < policy.overlay_roots().size(); ++i) {
        CORRAL_TRY(plan.mounts_.SnapshotRoot(policy.overlay_roots()[i].path, options.snapshots[i + 1],
                                             options.snapshot_pins));
      }
      const std::string why = "copied snapshot: the kernel refused overlayfs (" + options.snapshot_reason +
                              "), so under --best-effort the command writes a copy of each overlaid tree in the "
                              "run's directory; the real tree is not written, and the review is the same";
      feature("overlay", FeatureStatus::kNarrowed, why);
      if (!MutantActive(Mutant::kDegradedReport)) plan.dropped_.push_back("overlay: " + why);
    }
  }
  if (masked_proc) {
    plan.mounts_.MaskProc();
    plan.dropped_.push_back("/proc: the kernel refused a fresh one (the host masks parts of its own /proc, a "
                            "container's default), so an empty read-only /proc stands in: nothing of the host shows, "
                            "and tools that read /proc (ps, /proc/self/exe, /dev/fd and /dev/stdin) fail");
  }
  if (!m.namespaces) {
    // No mount view hides the masks (the policy's and, for root, /etc's
    // root-only files): Landlock must not grant them. Without Landlock
    // nothing would keep a mask the caller can read, and --best-effort
    // cannot drop an instruction to hide.
    CORRAL_ASSIGN_OR_RETURN(std::vector<MaskedPath> masks, MasksWithoutIdmap(policy));
    if (m.landlock_abi == 0) {
      for (const MaskedPath& mask : masks) {
        if (::access(mask.path.c_str(), R_OK) == 0 || (mask.is_dir && ::access(mask.path.c_str(), X_OK) == 0)) {
          return Error(ErrorKind::kUnsupported,
                       "namespaces and landlock: " + mask.path +
                           " is masked, and without a mount view or Landlock nothing keeps it from the command "
                           "(the caller can read it); --best-effort cannot drop an instruction to hide. The command "
                           "was not run. Give the host user namespaces or Landlock (docs/hosts.md).");
        }
      }
    } else if (!MutantActive(Mutant::kHostRuleMasks)) {
      CORRAL_ASSIGN_OR_RETURN(size_t split, plan.mounts_.LeaveOutOfRules(masks));
      if (split > 0) {
        plan.dropped_.push_back("landlock: " + std::to_string(split) +
                                " directories holding masks are granted entry by entry, masks left out: nothing "
                                "can be created or removed directly in them");
      }
    }
  }
  EtcViewResult etc_view;
  if (m.namespaces) {
    CORRAL_ASSIGN_OR_RETURN(etc_view, PrepareEtcView(policy, plan.mounts_, options.warm_etc_view));
    plan.etc_view_ = etc_view.outcome;
    if (options.warm_etc_view) plan.use_ = PlanUse::kCompareOnly;
    if (host_ports) {
      CORRAL_ASSIGN_OR_RETURN(std::string hosts,
                              SandboxHostsFile(egress.dns_names, ReadHostsFile("/etc/hosts"), LookUpAbsolute));
      plan.mounts_.AddFileOver("/etc/hosts", std::move(hosts));
    } else if (egress.active()) {
      // Under --allow-host every name but localhost goes to the sandbox's
      // name server, which gives an allowed one its synthetic address: the
      // host's own table, read inside, would send a name the proxy is to
      // resolve to an address with no route.
      CORRAL_ASSIGN_OR_RETURN(std::string hosts, SandboxHostsFile({}, ReadHostsFile("/etc/hosts"), LookUpAbsolute));
      plan.mounts_.AddFileOver("/etc/hosts", std::move(hosts));
    }
  }
  plan.id_maps_ = MakeIdMaps(policy.host().uid, policy.host().gid);

  // What Spawn reads besides the mounts.
  if (m.namespaces) {
    plan.clone_flags_ = SandboxCloneFlags(isolated ? NetworkNamespace::kNew : NetworkNamespace::kHost);
    if (own_network_namespace) plan.loopback_ = Loopback::kBringUp;
  }
  // The proxy must be the only way out: without the sandbox's own empty
  // network namespace it would be one more road, not the only one.
  if (egress.active() || !egress.local_ports.empty()) {
    if (!own_network_namespace) {
      return Error(ErrorKind::kUnsupported,
                   "--allow-host and --allow-local: corral's forwarding can be the command's only way out only from "
                   "the sandbox's own empty network namespace, which needs user namespaces; --best-effort cannot "
                   "drop that. The command was not run.");
    }
    if (policy.egress().active()) plan.services_.proxy = ProxyListeners::kHttpAndSocks;
    for (uint16_t port : policy.egress().local_ports) {
      plan.services_.local_ports[plan.services_.local_count++] = port;
    }
    if (policy.egress().active()) {
      for (uint16_t port : CapturedPorts(policy.egress(), kMaxCapturedPorts)) {
        plan.services_.captured_ports[plan.services_.captured_count++] = port;
      }
    }
  }
  if (m.seccomp) {
    // Without a mount view every host socket would be reachable by its
    // path or abstract name: unix sockets only as connected pairs.
    SeccompOptions seccomp{inet, m.namespaces ? UnixSockets::kAny : UnixSockets::kPairsOnly};
    plan.seccomp_filter_ = EmbeddedSeccompFilter(seccomp);
    if (SeccompFilterMutated()) {
      // The embedded filter is always whole: a mutant's is compiled now.
      static std::vector<sock_filter> mutant;
      CORRAL_ASSIGN_OR_RETURN(mutant, BuildSeccompFilter(seccomp));
      plan.seccomp_filter_ = mutant;
    }
    plan.init_filter_ = EmbeddedInitSeccompFilter();
  }
  plan.cwd_ = SandboxWorkingDirectory(policy);
  plan.fallback_cwd_ = policy.workspace() ? policy.workspace()->path : "/";
  // A namespace the sysctls did not forbid can still be refused at spawn
  // time; best effort then runs without namespaces, and says so.
  plan.fallback_ = ((best_effort || accepted(Rung::kNoUserNamespaces)) && policy.write_view() == WriteView::kDirect) ||
                           MutantActive(Mutant::kPlanFailClosed)
                       ? Fallback::kWithoutNamespaces
                       : Fallback::kNone;

  // What this plan provides.
  Guarantees provided;
  provided.Add(Guarantee::kEnvScrub);
  provided.Add(Guarantee::kResourceLimits);
  provided.Add(Guarantee::kPrivilegeDrop);
  if (m.namespaces) {
    provided.Add(Guarantee::kProcessBoundary);
    provided.Add(Guarantee::kReadBoundary);
    provided.Add(Guarantee::kWriteBoundary);
    if (isolated) provided.Add(Guarantee::kNetworkBoundary);
  }
  if (m.landlock_abi > 0) {
    // Landlock alone cannot mask a secret inside a granted tree.
    if (m.namespaces || policy.masks().empty()) provided.Add(Guarantee::kReadBoundary);
    provided.Add(Guarantee::kWriteBoundary);
    provided.Add(Guarantee::kExecBoundary);
  }
  if (m.seccomp) {
    provided.Add(Guarantee::kSyscallFilter);
    // Without a network namespace: with no INET sockets and Landlock
    // denying TCP, no network remains; under --allow-port, TCP connect to
    // the ports Landlock names and nothing else.
    if (((isolated && !own_network_namespace) || host_ports) && m.landlock_abi >= 4) {
      provided.Add(Guarantee::kNetworkBoundary);
    }
  }
  // Sharing the host's network namespace shares its abstract unix sockets;
  // only Landlock's scope (ABI 6) keeps host daemons listening there apart.
  if (!isolated && m.landlock_abi < 6) {
    provided.Remove(Guarantee::kProcessBoundary);
    if (!best_effort) {
      return Error(ErrorKind::kUnsupported,
                   std::string("landlock: with ") + (host_ports ? "--allow-port" : "--network all") +
                       " (the host's network), this kernel's Landlock (ABI " + std::to_string(m.landlock_abi) +
                       ", scopes need 6, Linux 6.12) cannot keep the command from the host's abstract unix sockets "
                       "(X11, D-Bus, ...). The command was not run. Use a newer kernel, or pass --best-effort to "
                       "run without that boundary (rung " + RungsText(plan.rungs_) + ", see docs/hosts.md).");
    }
    plan.dropped_.push_back("abstract unix sockets: in the host's network the host's are reachable before Landlock ABI 6");
  }
  plan.provided_ = provided;
  plan.required_ = RequiredGuarantees(policy);

  // The report, one entry per feature.
  const auto& ops = plan.mounts_.ops;
  size_t binds = 0;
  for (const MountOp& op : ops) binds += op.kind == MountKind::kBind ? 1 : 0;
  if (m.namespaces) {
    feature("user namespace", FeatureStatus::kEnforced,
            "uid " + std::to_string(policy.host().uid) + " and gid " + std::to_string(policy.host().gid) +
                " mapped onto themselves; no other ids exist inside");
    std::string etc;
    if (etc_view.outcome == EtcViewOutcome::kIdmapped) {
        etc = "; /etc seen as others see it (an idmapped mount: no file in it is root's)";
    } else if (etc_view.outcome == EtcViewOutcome::kWalked) {
        etc = "; /etc's " + std::to_string(etc_view.masks) + " root-only entries masked one by one (" +
              etc_view.reason + ")";
    }
    feature("mount view", FeatureStatus::kEnforced,
            "fresh root with " + std::to_string(binds) + " bind mounts, " + std::to_string(policy.masks().size()) +
                " masked secrets" + etc + "; the host root is detached");
    feature("pid namespace", FeatureStatus::kEnforced, "host processes are invisible; the tree dies with its init");
    feature("proc", masked_proc ? FeatureStatus::kNarrowed : FeatureStatus::kEnforced,
            masked_proc ? "an empty read-only tmpfs (the kernel refused a fresh /proc): no process shows, not even "
                          "the command's own"
                        : "a fresh procfs of the sandbox's PID namespace, its writable corners read-only");
    feature("ipc namespace", FeatureStatus::kEnforced, "private System V IPC and POSIX message queues");
    feature("uts namespace", FeatureStatus::kEnforced, "hostname \"corral\"");
    std::string network_detail =
        isolated     ? "empty: only its own lo (up), no route out; TCP and UDP on 127.0.0.1 reach only the "
                       "sandbox's own servers; names get NXDOMAIN from corral's own name server"
        : host_ports ? "shares the host network for TCP connect to port " + PortList(egress.connect_ports) +
                           " of every host (--allow-port); no UDP, no listening; names resolve only from the "
                           "view's /etc/hosts (" + std::to_string(egress.dns_names.size()) + " --allow-dns name(s))"
                     : "shares the host network, as granted (--network all)";
    if (policy.egress().active()) {
      network_detail += "; the one way out is corral's proxy on its lo (HTTP 127.0.0.1:3128, SOCKS5 :1080) to " +
                        std::to_string(policy.egress().allow_text.size()) + " --allow-host rule(s)";
    }
    for (uint16_t port : policy.egress().local_ports) {
      network_detail += "; 127.0.0.1:" + std::to_string(port) + " forwarded to the host's (--allow-local)";
    }
    feature("network namespace", FeatureStatus::kEnforced, network_detail);
  } else {
    for (const char* name : {"user namespace", "mount view", "pid namespace", "ipc namespace", "uts namespace",
                             "network namespace"}) {
      feature(name, FeatureStatus::kUnavailable, "dropped under --best-effort: user namespaces are unavailable");
    }
  }
  if (m.landlock_abi > 0) {
    feature("landlock filesystem", m.landlock_abi >= 3 ? FeatureStatus::kEnforced : FeatureStatus::kNarrowed,
            "ABI " + std::to_string(m.landlock_abi) +
                (m.landlock_abi >= 3 ? ": every filesystem right handled"
                                     : ": truncate and cross-directory rename are not handled before ABI 3"));
    feature("landlock ioctl", m.landlock_abi >= 5 ? FeatureStatus::kEnforced : FeatureStatus::kNarrowed,
            m.landlock_abi >= 5 ? "device ioctls limited to /dev" : "device ioctls need ABI 5");
    if (host_ports) {
      feature("landlock network", m.landlock_abi >= 4 ? FeatureStatus::kEnforced : FeatureStatus::kUnavailable,
              m.landlock_abi >= 4 ? "TCP connect only to port " + PortList(egress.connect_ports) +
                                        " (of any host); every bind denied"
                                  : "TCP is not handled before ABI 4: every TCP port of every host is open "
                                    "(dropped under --best-effort)");
    } else if (network_none && !own_network_namespace) {
      feature("landlock network", m.landlock_abi >= 4 ? FeatureStatus::kEnforced : FeatureStatus::kNarrowed,
              m.landlock_abi >= 4 ? "all TCP bind and connect denied"
                                  : "TCP is not handled before ABI 4; seccomp still refuses INET sockets");
    }
    feature("landlock scopes", m.landlock_abi >= 6 ? FeatureStatus::kEnforced : FeatureStatus::kNarrowed,
            m.landlock_abi >= 6 ? "abstract unix sockets and signals scoped to the sandbox"
                                : "abstract unix sockets and signals need ABI 6; the namespaces still isolate them");
  } else {
    feature("landlock filesystem", FeatureStatus::kUnavailable, "dropped under --best-effort");
    // What is left of the two boundaries Landlock draws, as it really is.
    feature("exec boundary", FeatureStatus::kNarrowed,
            m.namespaces ? "only the mount view's noexec binds: grants without exec are mounted noexec, every "
                           "system tree in the view stays executable"
                         : "none: any file the caller may read can be executed");
    feature("read boundary", m.namespaces ? FeatureStatus::kEnforced : FeatureStatus::kUnavailable,
            m.namespaces ? "the mount view alone: only granted trees are in it, the masks hide secrets inside them"
                         : "none: the caller's whole filesystem is readable as the caller");
  }
  if (m.seccomp) {
    feature("seccomp filter", FeatureStatus::kEnforced,
            std::to_string(DeniedSyscallNames().size()) +
                " syscalls denied, clone3 ENOSYS, namespace flags, TIOCSTI, personality and socket families checked; " +
                (inet == InetSockets::kStreamAndDatagram
                     ? std::string("INET sockets stream and datagram only (no raw or packet); ")
                 : inet == InetSockets::kTcpOnly
                     ? std::string("INET sockets TCP only (no UDP, MPTCP, SCTP, raw or packet), no bind or listen, no "
                                   "MSG_FASTOPEN; ")
                     : std::string("no INET sockets; ")) +
                (m.namespaces ? "" : "unix sockets only as socketpair(2) pairs; ") +
                "foreign architectures and x32 killed");
  } else {
    feature("seccomp filter", FeatureStatus::kUnavailable, "dropped under --best-effort");
  }
  feature("capabilities", FeatureStatus::kEnforced, "all sets empty; securebits locked; no_new_privs set");
  feature("environment", FeatureStatus::kEnforced,
          std::to_string(DefaultEnvAllowlist().size() + policy.env_allow().size()) + " variables allowed");
  const ProtectedSet& prot = policy.protected_paths();
  size_t bound = 0, missing = 0;
  for (const ProtectedPath& p : prot.paths) {
    bound += p.state == ProtectedPath::State::kDirectory || p.state == ProtectedPath::State::kFile;
    missing += p.state == ProtectedPath::State::kMissing;
  }
  feature("protected paths", m.namespaces ? FeatureStatus::kEnforced : FeatureStatus::kNarrowed,
          std::to_string(bound) + " read-only, " + std::to_string(prot.anchors.size()) + " pinned directories, " +
              std::to_string(missing) + " missing (anything created there is quarantined after the run)");
  feature("resource limits", FeatureStatus::kEnforced,
          std::string("core dumps off") +
              (policy.timeout() ? "; the tree is killed after " + std::to_string(policy.timeout()->count()) + "s" : ""));

  CORRAL_TRY(CompileLimits(policy, host.cgroup_offer, plan.rlimits_, plan.cgroup_, unavailable, feature));

  Guarantees missing_guarantees = plan.required_.Missing(plan.provided_);
  const bool rungs_accepted = std::all_of(plan.rungs_.begin(), plan.rungs_.end(), [&](Rung rung) {
    return rung == Rung::kFull || rung == Rung::kLandlock4To5 || rung == Rung::kLandlock1To3 || accepted(rung);
  });
  const bool accepted_rung = rungs_accepted && plan.rungs_.front() != Rung::kFull &&
                             std::any_of(plan.rungs_.begin(), plan.rungs_.end(), accepted);
  if (missing_guarantees.bits() != 0 && !best_effort && !accepted_rung && !MutantActive(Mutant::kPlanFailClosed)) {
    return Error(ErrorKind::kUnsupported, "this host cannot provide " + missing_guarantees.Joined() + " (rung " +
                                              RungsText(plan.rungs_) +
                                              ", see docs/hosts.md). The command was not run. Pass --best-effort "
                                              "to run anyway.");
  }
  plan.level_ = missing_guarantees.bits() == 0 && plan.dropped_.empty() ? Level::kFull : Level::kDegraded;
  CORRAL_INVARIANT(plan.level_ == Level::kFull || best_effort || accepted_rung || options.without_namespaces ||
                       MutantActive(Mutant::kPlanFailClosed),
                   "only a best-effort policy, or an accepted rung, compiles to a degraded plan");
  return plan;
}

std::string Plan::Fingerprint() const {
  // Length-prefixed fields, so no two plans write the same bytes.
  std::string bytes;
  auto text = [&bytes](std::string_view value) {
    bytes += std::to_string(value.size());
    bytes += ':';
    bytes += value;
  };
  auto number = [&text](uint64_t value) { text(std::to_string(value)); };
  auto filter = [&text](std::span<const sock_filter> program) {
    text(std::string_view(reinterpret_cast<const char*>(program.data()), program.size_bytes()));
  };
  number(mechanisms_.namespaces);
  number(static_cast<uint64_t>(mechanisms_.landlock_abi));
  number(mechanisms_.seccomp);
  number(clone_flags_);
  number(static_cast<uint64_t>(loopback_));
  number(static_cast<uint64_t>(services_.proxy));
  for (int i = 0; i < services_.local_count; ++i) number(services_.local_ports[i]);
  text("captured");
  for (int i = 0; i < services_.captured_count; ++i) number(services_.captured_ports[i]);
  filter(seccomp_filter_);
  filter(init_filter_);
  text(fallback_cwd_);
  number(static_cast<uint64_t>(fallback_));
  number(static_cast<uint64_t>(landlock_.abi));
  number(landlock_.fs);
  number(landlock_.net);
  number(landlock_.scoped);
  for (int i = 0; i < landlock_.connect_port_count; ++i) number(landlock_.connect_ports[i]);
  number(mounts_.root_landlock);
  for (const MountOp& op : mounts_.ops) {
    number(static_cast<uint64_t>(op.kind));
    number(static_cast<uint64_t>(op.flags));
    number(op.pin.dev);
    number(op.pin.ino);
    number(op.landlock);
    for (const char* field : {op.source, op.target, op.options}) text(field == nullptr ? "\x01" : field);
  }
  text(id_maps_.uid_map);
  text(id_maps_.gid_map);
  // The resource limits each call runs under, and the cgroup of the whole
  // sandbox: a warm sandbox started without them must not run a plan that
  // has them.
  text("rlimits");
  for (size_t i = 0; i < rlimits_.count; ++i) {
    number(static_cast<uint64_t>(rlimits_.entries[i].resource));
    number(rlimits_.entries[i].soft);
    number(rlimits_.entries[i].hard);
  }
  text("cgroup");
  number(cgroup_.limits.pids_max.value_or(0));
  number(cgroup_.limits.pids_max.has_value());
  number(cgroup_.limits.memory_max.value_or(0));
  number(cgroup_.limits.memory_max.has_value());
  number(cgroup_.limits.cpu_milli.value_or(0));
  number(cgroup_.limits.cpu_milli.has_value());
  text(cgroup_.parent);
  number(cgroup_.enable);
  number(static_cast<uint64_t>(level_));
  for (const std::string& name : required_.Names()) text(name);
  text("provided");
  for (const std::string& name : provided_.Names()) text(name);
  text(RungsText(rungs_));
  for (const std::string& dropped : dropped_) text(dropped);
  return Sha256Hex(bytes);
}

}  // namespace corral
