#include <CLI/CLI.hpp>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "base/terminal.h"
#include "cli/refusal.h"
#include "confine/describe.h"
#include "resolve/describe.h"
#include "confine/detect.h"
#include "confine/plan.h"
#include "base/exit_codes.h"
#include "policy/search_path.h"
#include "policy/tmpfs_size.h"

namespace corral::cli {
namespace {

// A string of the description as text: a path or a note a repository chose
// never reaches the terminal as a control (base/terminal.h).
std::string Shown(const nlohmann::json& value) { return EscapeControls(value.get<std::string>()); }

void PrintText(const nlohmann::json& policy, const nlohmann::json& layers, const nlohmann::json& path,
               const nlohmann::json* plan, const std::string& refusal, const std::vector<std::string>& command) {
  std::printf("corral explain: what `corral run` would enforce (nothing was run)\n\n");
  std::string line;
  for (const std::string& arg : command) line += (line.empty() ? "" : " ") + EscapeControls(arg);
  std::printf("command      %s\n", line.c_str());
  std::printf("policy       %s\n", Shown(policy["fingerprint"]).c_str());
  std::printf("mode         %s (from the %s%s)\n", Shown(layers["mode"]).c_str(),
              Shown(layers["mode_layer"]) == "override" ? "--mode flag"
                                                                     : Shown(layers["mode_layer"]).c_str(),
              layers["session"].is_null() ? "" : (" " + Shown(layers["session"])).c_str());
  std::printf("approval     %s (from %s)%s\n", Shown(layers["approval"]).c_str(),
              Shown(layers["approval_source"]).c_str(),
              layers["preset"].is_null() ? "" : ("; preset " + Shown(layers["preset"])).c_str());
  std::string files;
  for (const auto& file : layers["config_files"]) files += (files.empty() ? "" : ", ") + Shown(file);
  std::printf("config       %s\n", files.empty() ? "(no config file)" : files.c_str());
  std::printf("backend      %s (sandbox.backend; `corral run` is the native runner)\n",
              Shown(layers["backend"]).c_str());
  for (const auto& gated : layers["gated"]) {
    std::printf("gated        %s (asks for a single-use grant before the run)\n", Shown(gated).c_str());
  }
  for (const auto& note : policy["notes"]) std::printf("note         %s\n", Shown(note).c_str());
  std::printf("workspace    %s%s\n",
              policy["workspace"].is_null() ? "(none)" : Shown(policy["workspace"]).c_str(),
              Shown(layers["workspace_layer"]) == "repository"
                  ? " (the top of the git repository the working directory is in)"
                  : "");
  if (!Shown(layers["workspace_note"]).empty()) {
    std::printf("note         %s\n", Shown(layers["workspace_note"]).c_str());
  }
  std::printf("cwd          %s\n", Shown(policy["cwd"]).c_str());
  std::printf("grants\n");
  for (const auto& grant : policy["grants"]) {
    std::printf("  %-4s %-40s %s\n", Shown(grant["access"]).c_str(),
                Shown(grant["path"]).c_str(), Shown(grant["origin"]).c_str());
  }
  for (const auto& grant : policy["grants"]) {
    if (!grant.contains("host_control")) continue;
    std::printf("  WARNING: --allow-unix %s hands the command control of the host: %s\n",
                Shown(grant["path"]).c_str(), Shown(grant["host_control"]).c_str());
  }
  for (const auto& link : policy["symlinks"]) {
    std::printf("  link %-40s -> %s\n", Shown(link["path"]).c_str(),
                Shown(link["target"]).c_str());
  }
  std::printf("hidden       %zu paths (/etc secrets, forbid_read matches; they read as permission denied)\n",
              policy["masked"].size());
  std::printf("protected\n");
  for (const auto& entry : policy["protected"]) {
    std::string state = Shown(entry["state"]);
    if (state == "missing") continue;
    std::string path = Shown(entry["path"]);
    // A repository's config: the command writes its own copy (repair/git_config_stage.h).
    if (state == "read-only file" && path.ends_with("/.git/config")) {
      std::printf("  %-20s %s (the command writes a copy; only safe keys, such as user.* and remotes, land "
                  "after the run)\n",
                  "staged file", path.c_str());
      continue;
    }
    std::printf("  %-20s %s\n", state.c_str(), path.c_str());
  }
  size_t missing = 0;
  for (const auto& entry : policy["protected"]) missing += entry["state"] == "missing";
  std::printf("  %zu missing protected paths: anything the command creates there is quarantined\n", missing);
  for (const auto& note : policy["protected_notes"]) std::printf("  note: %s\n", Shown(note).c_str());
  std::printf("private      /tmp%s, $HOME=%s (%s), minimal /dev, fresh /proc\n",
              policy["private"]["tmp"].get<bool>() ? "" : " (granted instead)",
              Shown(policy["private"]["home"]).c_str(),
              policy["private"].value("home_gitconfig", false)
                  ? "empty but for a .gitconfig with your git identity and default branch"
                  : "empty");
  std::printf("tmpfs size   %s each for /tmp and $HOME, %s for /dev/shm (host memory; --tmpfs-size)\n",
              TmpfsSizeText(policy["private"]["tmpfs_size"].get<uint64_t>()).c_str(),
              TmpfsSizeText(policy["private"]["shm_size"].get<uint64_t>()).c_str());
  std::printf("network      %s\n", Shown(policy["network"]).c_str());
  if (policy.contains("egress")) {
    const auto& egress = policy["egress"];
    auto joined = [](const nlohmann::json& list) {
      std::string text;
      for (const auto& item : list) text += (text.empty() ? "" : ", ") + Shown(item);
      return text;
    };
    if (!egress["allow_host"].empty()) {
      std::printf("  only through corral's proxy (HTTP 127.0.0.1:3128, SOCKS5 127.0.0.1:1080) to: %s\n",
                  joined(egress["allow_host"]).c_str());
    }
    if (!egress["deny_host"].empty()) std::printf("  never to: %s\n", joined(egress["deny_host"]).c_str());
    for (const auto& port : egress["allow_local"]) {
      std::printf("  127.0.0.1:%d inside is the host's 127.0.0.1:%d (--allow-local)\n", port.get<int>(), port.get<int>());
    }
    if (!egress["allow_private"].empty()) {
      std::printf("  into these non-public ranges too: %s\n", joined(egress["allow_private"]).c_str());
    }
  }
  if (policy.contains("host_ports")) {
    const auto& ports = policy["host_ports"];
    std::string list, names;
    for (const auto& port : ports["allow_port"]) list += (list.empty() ? "" : ", ") + std::to_string(port.get<int>());
    for (const auto& name : ports["allow_dns"]) names += (names.empty() ? "" : ", ") + Shown(name);
    std::printf("  from the host's network: TCP connect to port %s of EVERY host (the internet, your LAN, this "
                "host's loopback); no UDP, no listening, nothing else (--allow-port)\n",
                list.c_str());
    std::printf("  names that resolve: %s (nothing else resolves)\n",
                names.empty() ? "none, only addresses work (--allow-dns NAME)" : names.c_str());
  }
  std::string env;
  for (const auto& name : policy["env"]) env += (env.empty() ? "" : " ") + Shown(name);
  std::printf("env          %s\n", env.c_str());
  if (!path["warning"].is_null()) std::printf("PATH         warning: %s\n", Shown(path["warning"]).c_str());
  for (const auto& entry : path["hidden"]) std::printf("PATH         not visible inside: %s\n", Shown(entry).c_str());
  std::printf("timeout      %s\n",
              policy["timeout"].is_null() ? "none" : (std::to_string(policy["timeout"].get<long long>()) + "s").c_str());
  std::printf("pin          %s\n", policy["pin_sha256"].is_null() ? "none" : Shown(policy["pin_sha256"]).c_str());
  std::printf("enforcement  %s\n\n", Shown(policy["enforcement"]).c_str());
  if (plan == nullptr) {
    std::printf("refused      %s\n", EscapeControls(refusal).c_str());
    return;
  }
  const nlohmann::json& p = *plan;
  std::printf("level        %s\n", Shown(p["level"]).c_str());
  std::printf("rung         %s (docs/hosts.md)\n", Shown(p["rung"]).c_str());
  std::string provided;
  for (const auto& name : p["provided"]) provided += (provided.empty() ? "" : ", ") + Shown(name);
  std::printf("guarantees   %s\n", provided.c_str());
  for (const auto& dropped : p["dropped"]) std::printf("DROPPED      %s\n", Shown(dropped).c_str());
  std::printf("features\n");
  for (const auto& feature : p["report"]) {
    std::printf("  %-11s %-20s %s\n", Shown(feature["status"]).c_str(),
                Shown(feature["feature"]).c_str(), Shown(feature["detail"]).c_str());
  }
}

}  // namespace

void ExplainCommand::Register(CLI::App& app) {
  flags.Register(app);
  app.add_flag("--json", json, "print JSON instead of text");
}

int ExplainCommand::Execute(std::vector<std::string> command) const {
  // A request refused before there is a policy to describe: the same error
  // object `corral wrap --json` prints.
  const RefusalFormat format = json ? RefusalFormat::kJson : RefusalFormat::kText;
  Result<HostContext> host = CaptureHostContext();
  if (!host.ok()) return ReportRefusal(host.error(), format);
  Result<ResolvedRequest> resolved = flags.Resolve(*host);
  if (!resolved.ok()) return ReportRefusal(resolved.error(), format);
  Result<Policy> policy = BuildPolicy(*host, resolved->spec);
  if (!policy.ok()) return ReportRefusal(policy.error(), format);
  nlohmann::json described = DescribePolicy(*policy);
  nlohmann::json layers = DescribeResolution(*resolved);
  // What the command's PATH finds inside and outside (policy/search_path.h).
  PathComparison compared = ComparePath(*policy, command.empty() ? std::string() : command.front());
  nlohmann::json path = {{"warning", compared.warning ? nlohmann::json(*compared.warning) : nlohmann::json(nullptr)},
                         {"hidden", compared.hidden}};
  // `corral run` refuses a configured backend it cannot run under before
  // anything else, danger-full-access included.
  Status runner = CheckRunnerBackend(resolved->backend);
  Result<Plan> plan = !runner.ok()             ? Result<Plan>(runner.error())
                      : policy->unconfined() ? Result<Plan>(Error(ErrorKind::kPolicy, "danger-full-access: "
                                                                  "the command would run unconfined (level none)"))
                                             : Compile(*policy, ProbeHost());
  nlohmann::json plan_json = plan.ok() ? DescribePlan(*plan) : nlohmann::json(nullptr);
  std::string refusal = plan.ok() ? std::string() : plan.error().ToString();
  if (json) {
    nlohmann::json out = {{"command", command},     {"policy", described}, {"resolution", layers},
                          {"path", path},           {"plan", plan_json},
                          {"refused", plan.ok() ? nlohmann::json(nullptr) : nlohmann::json(refusal)}};
    std::printf("%s\n", out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
  } else {
    PrintText(described, layers, path, plan.ok() ? &plan_json : nullptr, refusal, command);
  }
  if (plan.ok() || (runner.ok() && policy->unconfined())) return 0;
  return ExitCodeFor(plan.error().kind());
}

}  // namespace corral::cli
