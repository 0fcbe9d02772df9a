#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>
#include <vector>
#include <nlohmann/json.hpp>

#include "base/terminal.h"
#include "cli/commands.h"
#include "confine/describe.h"
#include "confine/plan.h"
#include "base/exit_codes.h"
#include "exec/spawn.h"

namespace corral::cli {

namespace {

// One line per thing missing on this host: what it is and the one change
// that gives it (docs/hosts.md has the long form).
std::vector<std::string> HostAdvice(const HostSupport& host, const Plan* plan, bool userns_refused,
                                    const std::string& probe) {
  std::vector<std::string> advice;
  if (host.apparmor_restricts_userns) {
    advice.push_back("kernel.apparmor_restrict_unprivileged_userns is 1 and no AppArmor profile allows corral user "
                     "namespaces: run `sudo corral setup apparmor --install` and the apparmor_parser command it "
                     "prints");
  }
  if (!host.container.empty() && (!host.user_namespaces || userns_refused)) {
    advice.push_back(
        "inside " + host.container + ": user namespaces are refused" +
        (host.outer_seccomp_filter ? " (the container's seccomp profile forbids unshare and clone with CLONE_NEWUSER)"
                                   : "") +
        ". Docker/Podman: run with a seccomp profile that allows them (--security-opt seccomp=PROFILE); Kubernetes: "
        "a pod with hostUsers: false (and, under a restrictive seccomp profile, one allowing unshare). Without "
        "it corral gives the no-userns rung under --best-effort");
  } else if (userns_refused) {
    advice.push_back("user namespaces: the kernel settings allow them but creating one failed (corral runs under "
                     "another sandbox's seccomp filter, or a security module refuses): run corral outside it, or "
                     "the no-userns rung under --best-effort");
  } else if (!host.user_namespaces && !host.apparmor_restricts_userns) {
    advice.push_back("user namespaces: " + host.user_namespaces_detail +
                     "; allow them (sysctl user.max_user_namespaces, kernel.unprivileged_userns_clone=1), or run "
                     "the no-userns rung under --best-effort");
  }
  if (probe.find("fresh /proc") != std::string::npos) {
    advice.push_back("the outer /proc is partly masked (a container's default), so a fresh /proc cannot be mounted: "
                     "Docker: --security-opt systempaths=unconfined; Kubernetes: securityContext.procMount: "
                     "Unmasked (with hostUsers: false). Without it corral gives the masked-proc rung (an empty "
                     "read-only /proc) under --best-effort");
  }
  if (host.landlock_abi == 0) {
    advice.push_back("no Landlock: boot Linux 5.13 or newer with \"landlock\" in lsm=; without it corral gives the "
                     "no-landlock rung under --best-effort");
  } else if (host.landlock_abi < 6 && plan != nullptr) {
    advice.push_back("Landlock ABI " + std::to_string(host.landlock_abi) + " (rung " +
                     std::string(RungName(host.landlock_abi <= 3 ? Rung::kLandlock1To3 : Rung::kLandlock4To5)) +
                     "): Linux 6.12 or newer gives ABI 6 and the full rung");
  }
  return advice;
}

}  // namespace

void CheckCommand::Register(CLI::App& app) { app.add_flag("--json", json, "print JSON instead of text"); }

int CheckCommand::Execute() const {
  const HostSupport& host = ProbeHost();
  // The default policy, without a workspace so that any directory works: the
  // same mechanisms every run needs.
  Result<HostContext> context = CaptureHostContext();
  if (!context.ok()) {
    PrintError(context.error().ToString());
    return ExitCodeFor(context.error().kind());
  }
  PolicyBuilder builder(*context);
  builder.NoWorkspace();
  Result<Policy> policy = builder.Build();
  if (!policy.ok()) {
    PrintError(policy.error().ToString());
    return ExitCodeFor(policy.error().kind());
  }
  Result<Plan> plan = Compile(*policy, host);
  std::string probe = "not attempted";
  bool probe_ok = false;
  // The sysctls can allow user namespaces where creating one is refused
  // anyway (a seccomp filter, an LSM, a nested sandbox): then the probe says so.
  bool userns_refused = false;
  bool proc_refused = false;
  if (plan.ok()) {
    Command command;
    command.argv = {"true"};
    Result<SandboxProcess> process = Spawn(*plan, command, SpawnMode::kProbeOnly);
    probe_ok = process.ok();
    probe = probe_ok ? "a sandbox with the default policy was set up and torn down" : process.error().ToString();
    userns_refused = !probe_ok && process.error().kind() == ErrorKind::kNamespace;
    proc_refused = !probe_ok && ProcMountRefused(process.error());
  } else {
    probe = plan.error().ToString();
  }
  bool full = plan.ok() && probe_ok && plan->level() == Level::kFull;
  // What --best-effort would give here: the same default policy, compiled
  // without namespaces when the probe could not create them.
  std::string best_effort_rung;
  if (!full) {
    PolicyBuilder lenient(*context);
    lenient.NoWorkspace();
    lenient.SetEnforcement(Enforcement::kBestEffort);
    Result<Policy> lenient_policy = lenient.Build();
    if (lenient_policy.ok()) {
      Result<Plan> lenient_plan =
          Compile(*lenient_policy, host,
                  CompileOptions{.without_namespaces = userns_refused,
                                 .overlay_dir = {},
                                 .masked_proc = proc_refused,
                                 .overlay_root_dirs = {}, .snapshots = {}, .snapshot_pins = {}, .snapshot_reason = {}, .warm_etc_view = {}});
      if (lenient_plan.ok()) best_effort_rung = RungsText(lenient_plan->rungs());
    }
  }
  std::vector<std::string> advice = HostAdvice(host, plan.ok() ? &*plan : nullptr, userns_refused, probe);
  if (json) {
    nlohmann::json out = {{"host", DescribeHost(host)},
                          {"probe", {{"ok", probe_ok}, {"detail", probe}, {"user_namespaces_refused", userns_refused}}},
                          {"plan", plan.ok() ? DescribePlan(*plan) : nlohmann::json(nullptr)},
                          {"full", full},
                          {"rung", plan.ok() && probe_ok ? RungsText(plan->rungs()) : std::string("refused")},
                          {"best_effort_rung", best_effort_rung.empty() ? nlohmann::json(nullptr)
                                                                        : nlohmann::json(best_effort_rung)},
                          {"advice", advice}};
    std::printf("%s\n", out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    return full ? 0 : kExitSandbox;
  }
  std::printf("corral check: what this host can enforce\n\n");
  std::printf("kernel           %s\n", host.kernel_release.c_str());
  std::printf("landlock         %s\n",
              host.landlock_abi > 0 ? ("ABI " + std::to_string(host.landlock_abi)).c_str() : "unavailable");
  std::printf("user namespaces  %s\n",
              userns_refused ? ("refused: the kernel settings allow them (" + host.user_namespaces_detail +
                                "), but creating one failed; see the probe")
                                   .c_str()
                             : host.user_namespaces_detail.c_str());
  if (!host.apparmor_label.empty()) {
    std::printf("apparmor         label \"%s\"%s\n", EscapeControls(host.apparmor_label).c_str(),
                host.apparmor_restricts_userns ? "; kernel.apparmor_restrict_unprivileged_userns is 1" : "");
  }
  std::printf("seccomp          %s%s\n", host.seccomp ? "available" : "unavailable",
              host.outer_seccomp_filter ? "; corral already runs under another filter (a container's profile?)" : "");
  std::printf("container        %s\n", host.container.empty() ? "none detected" : host.container.c_str());
  std::printf("cgroups          %s\n", host.cgroup_detail.c_str());
  std::printf("probe            %s: %s\n", probe_ok ? "ok" : "FAILED", EscapeControls(probe).c_str());
  if (plan.ok()) {
    std::string provided;
    for (const std::string& name : plan->provided().Names()) provided += (provided.empty() ? "" : ", ") + name;
    std::printf("guarantees       %s\n", provided.c_str());
  }
  std::printf("level            %s\n", full ? "full: `corral run` enforces the default policy completely"
                                            : "NOT full: `corral run` will refuse (or, with --best-effort, degrade)");
  std::printf("rung             %s\n",
              plan.ok() && probe_ok ? RungsText(plan->rungs()).c_str()
                                    : ("refused; with --best-effort: " +
                                       (best_effort_rung.empty() ? std::string("refused too") : best_effort_rung))
                                          .c_str());
  for (const std::string& line : advice) std::printf("fix              %s\n", EscapeControls(line).c_str());
  return full ? 0 : kExitSandbox;
}

}  // namespace corral::cli
