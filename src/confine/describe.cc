#include "confine/describe.h"

#include "policy/unix_sockets.h"

#include <nlohmann/json.hpp>

#include "confine/mount_plan.h"

namespace corral {
namespace {

std::string_view StateName(ProtectedPath::State state) {
  switch (state) {
    case ProtectedPath::State::kMissing: return "missing";
    case ProtectedPath::State::kDirectory: return "read-only directory";
    case ProtectedPath::State::kFile: return "read-only file";
    case ProtectedPath::State::kSymlink: return "symlink";
  }
  return "missing";
}

}  // namespace

nlohmann::json DescribePolicy(const Policy& policy) {
  nlohmann::json out;
  out["fingerprint"] = policy.fingerprint();
  out["canonical"] = nlohmann::json::parse(policy.CanonicalJson());
  out["workspace"] = policy.workspace() ? nlohmann::json(policy.workspace()->path) : nlohmann::json(nullptr);
  out["cwd"] = SandboxWorkingDirectory(policy);
  nlohmann::json grants = nlohmann::json::array();
  for (const PathGrant& grant : policy.grants()) {
    grants.push_back({{"path", grant.path.path},
                      {"access", AccessString(grant.access)},
                      {"origin", GrantOriginName(grant.origin)},
                      {"type", grant.path.is_dir() ? "directory" : "file"}});
    std::optional<std::string_view> control =
        grant.origin == GrantOrigin::kUnixSocket ? HostControlSocket(grant.path.path) : std::nullopt;
    if (control) grants.back()["host_control"] = std::string(*control);
  }
  out["grants"] = std::move(grants);
  nlohmann::json symlinks = nlohmann::json::array();
  for (const SystemSymlink& link : policy.symlinks()) symlinks.push_back({{"path", link.path}, {"target", link.target}});
  out["symlinks"] = std::move(symlinks);
  nlohmann::json masks = nlohmann::json::array();
  for (const MaskedPath& mask : policy.masks()) masks.push_back(mask.path);
  out["masked"] = std::move(masks);
  nlohmann::json protected_paths = nlohmann::json::array();
  for (const ProtectedPath& entry : policy.protected_paths().paths) {
    protected_paths.push_back({{"path", entry.path}, {"state", StateName(entry.state)}});
  }
  out["protected"] = std::move(protected_paths);
  nlohmann::json anchors = nlohmann::json::array();
  for (const PinnedPath& anchor : policy.protected_paths().anchors) anchors.push_back(anchor.path);
  out["pinned_directories"] = std::move(anchors);
  out["protected_notes"] = policy.protected_paths().notes;
  out["private"] = {{"tmp", policy.GrantFor("/tmp") == nullptr},
                    {"home", policy.home()},
                    {"home_gitconfig", !policy.home_gitconfig().empty()},
                    {"dev", {"null", "zero", "full", "random", "urandom", "tty", "pts", "shm"}},
                    {"proc", policy.masks_root_only_proc()
                                 ? "fresh, for the sandbox's PID namespace; the entries others may not read are "
                                   "masked (found in it when it is mounted)"
                                 : "fresh, for the sandbox's PID namespace"},
                    {"tmpfs_size", policy.tmpfs_size()},
                    {"shm_size", policy.tmpfs_size() / 4}};
  out["network"] = policy.network_name();
  const EgressRules& egress = policy.egress();
  if (!egress.allow_text.empty() || !egress.deny_text.empty() || !egress.local_ports.empty()) {
    out["egress"] = {{"allow_host", egress.allow_text},
                     {"deny_host", egress.deny_text},
                     {"allow_private", egress.private_text},
                     {"allow_local", egress.local_ports},
                     {"proxy", egress.active() ? nlohmann::json{{"http", "127.0.0.1:3128"}, {"socks5", "127.0.0.1:1080"}}
                                               : nlohmann::json(nullptr)}};
  }
  if (egress.host_ports()) {
    out["host_ports"] = {{"allow_port", egress.connect_ports}, {"allow_dns", egress.dns_names}};
  }
  std::vector<std::string> env = DefaultEnvAllowlist();
  env.insert(env.end(), policy.env_allow().begin(), policy.env_allow().end());
  out["env"] = env;
  out["timeout"] = policy.timeout() ? nlohmann::json(policy.timeout()->count()) : nlohmann::json(nullptr);
  out["pin_sha256"] = policy.pin_sha256() ? nlohmann::json(*policy.pin_sha256()) : nlohmann::json(nullptr);
  out["enforcement"] = policy.enforcement() == Enforcement::kBestEffort ? "best-effort" : "required";
  out["mode"] = ModeName(policy.mode());
  out["home_mode"] = HomeModeName(policy.home_mode());
  out["forbid_read"] = policy.forbid_patterns();
  out["notes"] = policy.notes();
  return out;
}

nlohmann::json DescribePlan(const Plan& plan) {
  nlohmann::json out;
  out["level"] = LevelName(plan.level());
  out["rung"] = RungsText(plan.rungs());
  nlohmann::json rungs = nlohmann::json::array();
  for (Rung rung : plan.rungs()) rungs.push_back(RungName(rung));
  out["rungs"] = std::move(rungs);
  out["required"] = plan.required().Names();
  out["provided"] = plan.provided().Names();
  out["mechanisms"] = {{"namespaces", plan.mechanisms().namespaces},
                       {"landlock_abi", plan.mechanisms().landlock_abi},
                       {"seccomp", plan.mechanisms().seccomp}};
  out["dropped"] = plan.dropped();
  nlohmann::json report = nlohmann::json::array();
  for (const FeatureReport& feature : plan.report().features) {
    report.push_back({{"feature", feature.feature},
                      {"status", FeatureStatusName(feature.status)},
                      {"detail", feature.detail}});
  }
  out["report"] = std::move(report);
  return out;
}

nlohmann::json DescribeHost(const HostSupport& host) {
  return {{"kernel", host.kernel_release},
          {"landlock_abi", host.landlock_abi},
          {"user_namespaces", host.user_namespaces},
          {"user_namespaces_detail", host.user_namespaces_detail},
          {"apparmor_label", host.apparmor_label},
          {"apparmor_restricts_userns", host.apparmor_restricts_userns},
          {"seccomp", host.seccomp},
          {"outer_seccomp_filter", host.outer_seccomp_filter},
          {"container", host.container},
          {"cgroup2", host.cgroup2},
          {"cgroup_detail", host.cgroup_detail}};
}

}  // namespace corral
