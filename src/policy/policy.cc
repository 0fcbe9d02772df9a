#include "policy/policy.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "base/sha256.h"

namespace corral {
namespace {

bool IsValidEnvName(std::string_view name) {
  if (name.empty() || (name[0] >= '0' && name[0] <= '9')) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
}

}  // namespace

std::string_view NetworkModeName(NetworkMode mode) {
  return mode == NetworkMode::kAll ? "all" : "none";
}

std::string_view GrantOriginName(GrantOrigin origin) {
  switch (origin) {
    case GrantOrigin::kSystem: return "system";
    case GrantOrigin::kWorkspace: return "workspace";
    case GrantOrigin::kFlag: return "flag";
  }
  return "flag";
}

const std::vector<std::string>& DefaultEnvAllowlist() {
  static const std::vector<std::string> names = {"PATH", "HOME", "TERM", "LANG", "LC_ALL", "LC_CTYPE", "TZ"};
  return names;
}

std::vector<std::string> Policy::WritableRoots() const {
  std::vector<std::string> roots;
  for (const PathGrant& grant : grants_) {
    if (Has(grant.access, Access::kWrite)) roots.push_back(grant.path.path);
  }
  return roots;
}

const PathGrant* Policy::GrantFor(std::string_view path) const {
  const PathGrant* best = nullptr;
  for (const PathGrant& grant : grants_) {
    if (IsWithin(path, grant.path.path) && (best == nullptr || grant.path.path.size() > best->path.path.size())) {
      best = &grant;
    }
  }
  return best;
}

PolicyBuilder::PolicyBuilder(HostContext host) : host_(std::move(host)) {}

PolicyBuilder& PolicyBuilder::AllowRead(std::string path) {
  requested_.push_back({std::move(path), Access::kRead, "--allow-read"});
  return *this;
}
PolicyBuilder& PolicyBuilder::AllowWrite(std::string path) {
  requested_.push_back({std::move(path), Access::kRead | Access::kWrite, "--allow-write"});
  return *this;
}
PolicyBuilder& PolicyBuilder::AllowExec(std::string path) {
  requested_.push_back({std::move(path), Access::kRead | Access::kExec, "--allow-exec"});
  return *this;
}
PolicyBuilder& PolicyBuilder::AllowEnv(std::string name) {
  env_allow_.push_back(std::move(name));
  return *this;
}
PolicyBuilder& PolicyBuilder::Timeout(std::chrono::seconds timeout) {
  timeout_ = timeout;
  return *this;
}
PolicyBuilder& PolicyBuilder::Workspace(std::string dir) {
  workspace_ = std::move(dir);
  no_workspace_ = false;
  return *this;
}
PolicyBuilder& PolicyBuilder::NoWorkspace() {
  no_workspace_ = true;
  workspace_.reset();
  return *this;
}
PolicyBuilder& PolicyBuilder::Network(NetworkMode mode) {
  network_ = mode;
  return *this;
}
PolicyBuilder& PolicyBuilder::PinSha256(std::string hex) {
  pin_sha256_ = std::move(hex);
  return *this;
}
PolicyBuilder& PolicyBuilder::BestEffort(bool best_effort) {
  best_effort_ = best_effort;
  return *this;
}
PolicyBuilder& PolicyBuilder::WithoutSystemRoots() {
  system_roots_ = false;
  return *this;
}

Result<Policy> PolicyBuilder::Build() const {
  Policy policy;
  policy.host_ = host_;
  policy.network_ = network_;
  policy.enforcement_ = best_effort_ ? Enforcement::kBestEffort : Enforcement::kRequired;

  // The workspace: explicit, derived from the working directory, or none.
  if (!no_workspace_) {
    WorkspaceSource source = workspace_ ? WorkspaceSource::kExplicit : WorkspaceSource::kDerived;
    Result<PinnedPath> pinned = workspace_ ? PinPath(*workspace_, "--workspace")
                                           : PinDerivedPath(host_.cwd, "the working directory");
    if (!pinned.ok()) return std::move(pinned).error();
    if (!pinned->is_dir()) {
      return Error(ErrorKind::kUsage, "--workspace " + pinned->path + ": not a directory");
    }
    CORRAL_TRY(VetWorkspace(pinned->path, host_, source));
    policy.workspace_ = *pinned;
  }

  // Every grant by path; the same path named twice gets the union.
  std::map<std::string, PathGrant> by_path;
  auto add = [&](const PinnedPath& path, Access access, GrantOrigin origin) {
    auto [it, inserted] = by_path.try_emplace(path.path, PathGrant{path, access, origin});
    if (!inserted) {
      it->second.access |= access;
      if (origin != GrantOrigin::kSystem) it->second.origin = origin;
    }
  };
  if (system_roots_) {
    SystemRoots roots = DiscoverSystemRoots();
    for (const SystemTree& tree : roots.trees) add(tree.path, tree.access, GrantOrigin::kSystem);
    policy.symlinks_ = std::move(roots.symlinks);
  }
  if (policy.workspace_) {
    add(*policy.workspace_, Access::kRead | Access::kWrite | Access::kExec, GrantOrigin::kWorkspace);
  }
  std::vector<std::string> flag_paths;
  for (const Requested& request : requested_) {
    CORRAL_ASSIGN_OR_RETURN(PinnedPath pinned, PinPath(request.path, request.flag));
    flag_paths.push_back(pinned.path);
    add(pinned, request.access, GrantOrigin::kFlag);
  }

  // Effective access is the union along the path, as Landlock computes it; a
  // grant that adds nothing to its enclosing grant is redundant.
  for (auto& [path, grant] : by_path) {
    const PathGrant* parent = nullptr;
    for (const PathGrant& candidate : policy.grants_) {
      if (IsWithin(path, candidate.path.path)) parent = &candidate;
    }
    if (parent != nullptr) {
      grant.access |= parent->access;
      if (grant.access == parent->access && grant.origin != GrantOrigin::kWorkspace) continue;
    }
    policy.grants_.push_back(grant);
  }

  // Mask /etc secrets, unless the user explicitly granted one of them.
  if (system_roots_) {
    for (MaskedPath& mask : DiscoverEtcSecrets()) {
      bool granted = std::any_of(flag_paths.begin(), flag_paths.end(),
                                 [&](const std::string& p) { return IsWithin(p, mask.path); });
      if (!granted) policy.masks_.push_back(std::move(mask));
    }
  }

  policy.protected_ = DiscoverProtected(policy.WritableRoots());

  for (const std::string& name : env_allow_) {
    if (!IsValidEnvName(name)) {
      return Error(ErrorKind::kUsage, "--allow-env " + name + ": not a valid environment variable name");
    }
    const auto& defaults = DefaultEnvAllowlist();
    if (std::find(defaults.begin(), defaults.end(), name) == defaults.end() &&
        std::find(policy.env_allow_.begin(), policy.env_allow_.end(), name) == policy.env_allow_.end()) {
      policy.env_allow_.push_back(name);
    }
  }
  std::sort(policy.env_allow_.begin(), policy.env_allow_.end());

  if (timeout_) {
    if (timeout_->count() <= 0) return Error(ErrorKind::kUsage, "--timeout: must be a positive number of seconds");
    policy.timeout_ = timeout_;
  }
  if (pin_sha256_) {
    if (!IsSha256Hex(*pin_sha256_)) {
      return Error(ErrorKind::kUsage, "--pin-sha256 " + *pin_sha256_ +
                                          ": expected 64 lower-case hex digits, as `corral hash PATH` prints");
    }
    policy.pin_sha256_ = pin_sha256_;
  }

  // The canonical form: what was asked for, in a fixed order.
  nlohmann::json canonical;
  canonical["version"] = 1;
  canonical["workspace"] = policy.workspace_ ? nlohmann::json(policy.workspace_->path) : nlohmann::json(nullptr);
  nlohmann::json grants = nlohmann::json::array();
  for (const PathGrant& grant : policy.grants_) {
    grants.push_back({{"path", grant.path.path}, {"access", AccessString(grant.access)},
                      {"origin", GrantOriginName(grant.origin)}});
  }
  canonical["grants"] = std::move(grants);
  canonical["network"] = NetworkModeName(policy.network_);
  canonical["env"] = policy.env_allow_;
  canonical["timeout"] = policy.timeout_ ? nlohmann::json(policy.timeout_->count()) : nlohmann::json(nullptr);
  canonical["pin_sha256"] = policy.pin_sha256_ ? nlohmann::json(*policy.pin_sha256_) : nlohmann::json(nullptr);
  canonical["enforcement"] = best_effort_ ? "best-effort" : "required";
  canonical["protected_names"] = ProtectedNames();
  policy.canonical_json_ = canonical.dump();
  policy.fingerprint_ = Sha256Hex(policy.canonical_json_);
  return policy;
}

}  // namespace corral
