#include "policy/policy.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "base/sha256.h"
#include "policy/forbid.h"

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
    case GrantOrigin::kHome: return "home";
  }
  return "flag";
}

std::string_view HomeModeName(HomeMode mode) { return mode == HomeMode::kReal ? "real" : "isolated"; }

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
PolicyBuilder& PolicyBuilder::SetMode(Mode mode) {
  mode_ = mode;
  return *this;
}
PolicyBuilder& PolicyBuilder::AcknowledgeDangerFullAccess() {
  danger_acknowledged_ = true;
  return *this;
}
PolicyBuilder& PolicyBuilder::ForbidRead(std::string pattern) {
  forbid_read_.push_back(std::move(pattern));
  return *this;
}
PolicyBuilder& PolicyBuilder::Home(HomeMode mode) {
  home_mode_ = mode;
  return *this;
}

Result<Policy> PolicyBuilder::Build() const {
  Policy policy;
  policy.host_ = host_;
  policy.network_ = network_;
  policy.enforcement_ = best_effort_ ? Enforcement::kBestEffort : Enforcement::kRequired;
  policy.mode_ = mode_;
  policy.home_mode_ = home_mode_;
  if (mode_ == Mode::kDangerFullAccess && !danger_acknowledged_) {
    return Error(ErrorKind::kPolicy,
                 "danger-full-access runs the command with no sandbox at all: no namespaces, no Landlock, no "
                 "seccomp, the real environment. Pass --i-understand-danger-full-access (or set "
                 "sandbox.i_understand_danger_full_access = true) to accept that");
  }
  const bool read_only = mode_ == Mode::kReadOnly;
  // read-only mode is a ceiling: no grant keeps write access.
  auto narrow = [read_only](Access access) { return read_only ? access & (Access::kRead | Access::kExec) : access; };

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
  std::vector<std::string> user_roots;
  if (policy.workspace_) {
    add(*policy.workspace_, narrow(Access::kRead | Access::kWrite | Access::kExec), GrantOrigin::kWorkspace);
    user_roots.push_back(policy.workspace_->path);
  }
  std::vector<std::string> flag_paths;
  for (const Requested& request : requested_) {
    CORRAL_ASSIGN_OR_RETURN(PinnedPath pinned, PinPath(request.path, request.flag));
    if (pinned.path == "/") {
      return Error(ErrorKind::kUsage, request.flag + " /: granting the whole filesystem defeats the sandbox; "
                                                     "grant the trees the command needs");
    }
    if (read_only && Has(request.access, Access::kWrite)) {
      policy.notes_.push_back(request.flag + " " + pinned.path + " is read-only under read-only mode");
    }
    flag_paths.push_back(pinned.path);
    user_roots.push_back(pinned.path);
    add(pinned, narrow(request.access), GrantOrigin::kFlag);
  }
  if (home_mode_ == HomeMode::kReal) {
    Result<PinnedPath> home = PinDerivedPath(host_.home, "the real home");
    if (!home.ok()) return std::move(home).error();
    add(*home, Access::kRead, GrantOrigin::kHome);
    user_roots.push_back(home->path);
  }
  if (read_only && policy.workspace_) policy.notes_.push_back("the workspace is read-only under read-only mode");

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
  // forbid_read, plus corral's own state and (with a real home) credentials.
  std::vector<std::string> patterns = {"~/.local/state/corral", "~/.config/corral"};
  if (home_mode_ == HomeMode::kReal) {
    patterns.insert(patterns.end(), HomeCredentialPatterns().begin(), HomeCredentialPatterns().end());
  }
  for (const std::string& pattern : forbid_read_) {
    CORRAL_ASSIGN_OR_RETURN(std::string normalized, NormalizeForbidPattern(pattern, host_.home));
    policy.forbid_patterns_.push_back(normalized);
    patterns.push_back(pattern);
  }
  ForbidScope scope;
  scope.user_roots = user_roots;
  for (const PathGrant& grant : policy.grants_) scope.visible_roots.push_back(grant.path.path);
  CORRAL_ASSIGN_OR_RETURN(std::vector<MaskedPath> hidden, ExpandForbidden(patterns, host_.home, scope));
  for (MaskedPath& mask : hidden) {
    bool duplicate = std::any_of(policy.masks_.begin(), policy.masks_.end(),
                                 [&](const MaskedPath& m) { return IsWithin(mask.path, m.path); });
    if (!duplicate) policy.masks_.push_back(std::move(mask));
  }
  std::sort(policy.masks_.begin(), policy.masks_.end(),
            [](const MaskedPath& a, const MaskedPath& b) { return a.path < b.path; });

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
  canonical["mode"] = ModeName(mode_);
  canonical["home"] = HomeModeName(home_mode_);
  canonical["forbid_read"] = policy.forbid_patterns_;
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
