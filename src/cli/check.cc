#include <CLI/CLI.hpp>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "base/terminal.h"
#include "cli/commands.h"
#include "confine/describe.h"
#include "confine/plan.h"
#include "base/exit_codes.h"
#include "exec/spawn.h"

namespace corral::cli {

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
  if (plan.ok()) {
    Command command;
    command.argv = {"true"};
    Result<SandboxProcess> process = Spawn(*plan, command, SpawnMode::kProbeOnly);
    probe_ok = process.ok();
    probe = probe_ok ? "a sandbox with the default policy was set up and torn down" : process.error().ToString();
    userns_refused = !probe_ok && process.error().kind() == ErrorKind::kNamespace;
  } else {
    probe = plan.error().ToString();
  }
  bool full = plan.ok() && probe_ok && plan->level() == Level::kFull;
  if (json) {
    nlohmann::json out = {{"host", DescribeHost(host)},
                          {"probe", {{"ok", probe_ok}, {"detail", probe}, {"user_namespaces_refused", userns_refused}}},
                          {"plan", plan.ok() ? DescribePlan(*plan) : nlohmann::json(nullptr)},
                          {"full", full}};
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
  std::printf("seccomp          %s\n", host.seccomp ? "available" : "unavailable");
  std::printf("cgroups          %s\n", host.cgroup_detail.c_str());
  std::printf("probe            %s: %s\n", probe_ok ? "ok" : "FAILED", EscapeControls(probe).c_str());
  if (plan.ok()) {
    std::string provided;
    for (const std::string& name : plan->provided().Names()) provided += (provided.empty() ? "" : ", ") + name;
    std::printf("guarantees       %s\n", provided.c_str());
  }
  std::printf("level            %s\n", full ? "full: `corral run` enforces the default policy completely"
                                            : "NOT full: `corral run` will refuse (or, with --best-effort, degrade)");
  return full ? 0 : kExitSandbox;
}

}  // namespace corral::cli
