#include "policy/policy.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "base/invariant.h"
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

PolicyBuilder::PolicyBuilder(HostContext host, PolicySpec spec) : host_(std::move(host)), spec_(std::move(spec)) {}

PolicyBuilder& PolicyBuilder::AllowRead(std::string path) {
  spec_.allow_read.push_back(std::move(path));
  return *this;
}
PolicyBuilder& PolicyBuilder::AllowWrite(std::string path) {
  spec_.allow_write.push_back(std::move(path));
  return *this;
}
PolicyBuilder& PolicyBuilder::AllowExec(std::string path) {
  spec_.allow_exec.push_back(std::move(path));
  return *this;
}
PolicyBuilder& PolicyBuilder::AllowEnv(std::string name) {
  spec_.allow_env.push_back(std::move(name));
  return *this;
}
PolicyBuilder& PolicyBuilder::Timeout(std::chrono::seconds timeout) {
  spec_.timeout = timeout;
  return *this;
}
PolicyBuilder& PolicyBuilder::Workspace(std::string dir) {
  spec_.workspace = std::move(dir);
  spec_.no_workspace = false;
  return *this;
}
PolicyBuilder& PolicyBuilder::NoWorkspace() {
  spec_.no_workspace = true;
  spec_.workspace.reset();
  return *this;
}
PolicyBuilder& PolicyBuilder::Network(NetworkMode mode) {
  spec_.network = mode;
  return *this;
}
PolicyBuilder& PolicyBuilder::PinSha256(std::string hex) {
  spec_.pin_sha256 = std::move(hex);
  return *this;
}
PolicyBuilder& PolicyBuilder::BestEffort(bool best_effort) {
  spec_.best_effort = best_effort;
  return *this;
}
PolicyBuilder& PolicyBuilder::WithoutSystemRoots() {
  spec_.system_roots = false;
  return *this;
}
PolicyBuilder& PolicyBuilder::SetMode(Mode mode) {
  spec_.mode = mode;
  return *this;
}
PolicyBuilder& PolicyBuilder::AcknowledgeDangerFullAccess() {
  spec_.acknowledge_danger = true;
  return *this;
}
PolicyBuilder& PolicyBuilder::ForbidRead(std::string pattern) {
  spec_.forbid_read.push_back(std::move(pattern));
  return *this;
}
PolicyBuilder& PolicyBuilder::Home(HomeMode mode) {
  spec_.home = mode;
  return *this;
}

Result<Policy> BuildPolicy(const HostContext& host, const PolicySpec& spec) {
  return PolicyBuilder(host, spec).Build();
}

Result<Policy> PolicyBuilder::Build() const {
  Policy policy;
  policy.host_ = host_;
  policy.spec_ = spec_;
  policy.network_ = spec_.network;
  policy.enforcement_ = spec_.best_effort ? Enforcement::kBestEffort : Enforcement::kRequired;
  policy.mode_ = spec_.mode;
  policy.home_mode_ = spec_.home;
  if (spec_.mode == Mode::kDangerFullAccess && !spec_.acknowledge_danger) {
    return Error(ErrorKind::kPolicy,
                 "danger-full-access runs the command with no sandbox at all: no namespaces, no Landlock, no "
                 "seccomp, the real environment. Pass --i-understand-danger-full-access (or set "
                 "sandbox.i_understand_danger_full_access = true) to accept that");
  }
  const bool read_only = spec_.mode == Mode::kReadOnly;
  if (spec_.workspace && spec_.no_workspace) {
    return Error(ErrorKind::kUsage, "--workspace and --no-workspace cannot be combined");
  }
  // read-only mode is a ceiling: no grant keeps write access.
  auto narrow = [read_only](Access access) { return read_only ? access & (Access::kRead | Access::kExec) : access; };

  // The workspace: explicit, derived from the working directory, or none.
  if (!spec_.no_workspace) {
    WorkspaceSource source = spec_.workspace ? WorkspaceSource::kExplicit : WorkspaceSource::kDerived;
    Result<PinnedPath> pinned = spec_.workspace ? PinPath(*spec_.workspace, "--workspace")
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
  if (spec_.system_roots) {
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
  struct Requested {
    const std::vector<std::string>& paths;
    Access access;
    std::string flag;
  };
  const Requested requested[] = {
      {spec_.allow_read, Access::kRead, "--allow-read"},
      {spec_.allow_write, Access::kRead | Access::kWrite, "--allow-write"},
      {spec_.allow_exec, Access::kRead | Access::kExec, "--allow-exec"},
  };
  for (const Requested& request : requested) {
    for (const std::string& path : request.paths) {
      CORRAL_ASSIGN_OR_RETURN(PinnedPath pinned, PinPath(path, request.flag));
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
  }
  if (spec_.home == HomeMode::kReal) {
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

  // Mask /etc secrets, unless the user explicitly granted one of them. A grant
  // strictly inside a masked directory would lift the mask from its siblings
  // too, so it is refused: the user must name the directory itself.
  if (spec_.system_roots) {
    CORRAL_ASSIGN_OR_RETURN(std::vector<MaskedPath> secrets, DiscoverEtcSecrets(host_.uid));
    for (MaskedPath& mask : secrets) {
      bool granted = false;
      for (const std::string& p : flag_paths) {
        if (p == mask.path) {
          granted = true;
        } else if (IsWithin(p, mask.path)) {
          return Error(ErrorKind::kUsage, "a grant of " + p + " lies inside " + mask.path +
                                              ", which corral hides as a secret; grant " + mask.path +
                                              " itself if the command needs it");
        }
      }
      if (!granted) policy.masks_.push_back(std::move(mask));
    }
  }
  CORRAL_ASSIGN_OR_RETURN(std::vector<MaskedPath> proc_secrets, DiscoverProcSecrets(host_.uid));
  for (MaskedPath& mask : proc_secrets) policy.masks_.push_back(std::move(mask));
  // corral's own state (config, sessions, quarantine, compiled policies) may
  // never be writable inside: the next run would obey what the command wrote.
  std::vector<std::string> patterns;
  for (const std::string& dir : host_.OwnStateDirs()) {
    const PathGrant* grant = policy.GrantFor(dir);
    if (grant != nullptr && Has(grant->access, Access::kWrite)) {
      return Error(ErrorKind::kPolicy, "refusing to grant write on " + grant->path.path +
                                           ": it holds corral's own state (" + dir +
                                           "), which the next run would trust; grant a narrower tree");
    }
    // A grant inside it would be a way in of its own, past the masks: the
    // sessions, the sweep journal or the config, each of which the next run
    // trusts. Refused whatever its access.
    for (const PathGrant& inner : policy.grants_) {
      if (IsWithin(inner.path.path, dir)) {
        return Error(ErrorKind::kPolicy, "refusing to grant " + inner.path.path + ": it lies inside corral's own state (" +
                                             dir + "), which the next run trusts; nothing there is the command's");
      }
    }
    patterns.push_back(dir);  // and hidden where a read grant shows it
  }
  for (const std::string& file : spec_.own_files) patterns.push_back(file);
  // forbid_read, and (with a real home) credentials.
  if (spec_.home == HomeMode::kReal) {
    patterns.insert(patterns.end(), HomeCredentialPatterns().begin(), HomeCredentialPatterns().end());
  }
  for (const std::string& pattern : spec_.forbid_read) {
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

  for (size_t i = 0; i < policy.grants_.size(); ++i) {
    CORRAL_INVARIANT(policy.grants_[i].path.path != "/", "no grant covers the whole filesystem");
    CORRAL_INVARIANT(i == 0 || policy.grants_[i - 1].path.path < policy.grants_[i].path.path,
                     "grants are sorted, parents before children, without duplicates");
    CORRAL_INVARIANT(!read_only || !Has(policy.grants_[i].access, Access::kWrite),
                     "read-only mode leaves no writable grant");
  }
  policy.protected_ = DiscoverProtected(policy.WritableRoots());

  for (const std::string& name : spec_.allow_env) {
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

  if (spec_.timeout) {
    if (spec_.timeout->count() <= 0) return Error(ErrorKind::kUsage, "--timeout: must be a positive number of seconds");
    policy.timeout_ = spec_.timeout;
  }
  if (spec_.tmpfs_size < kMinTmpfsSize || spec_.tmpfs_size > kMaxTmpfsSize) {
    return Error(ErrorKind::kUsage, "--tmpfs-size " + TmpfsSizeText(spec_.tmpfs_size) + ": must be between " +
                                        TmpfsSizeText(kMinTmpfsSize) + " and " + TmpfsSizeText(kMaxTmpfsSize));
  }
  if (spec_.pin_sha256) {
    if (!IsSha256Hex(*spec_.pin_sha256)) {
      return Error(ErrorKind::kUsage, "--pin-sha256 " + *spec_.pin_sha256 +
                                          ": expected 64 lower-case hex digits, as `corral hash PATH` prints");
    }
    policy.pin_sha256_ = spec_.pin_sha256;
  }

  // The canonical form: what was asked for, in a fixed order.
  nlohmann::json canonical;
  canonical["version"] = 1;
  canonical["mode"] = ModeName(spec_.mode);
  canonical["home"] = HomeModeName(spec_.home);
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
  canonical["enforcement"] = spec_.best_effort ? "best-effort" : "required";
  // Only when set: a default policy keeps the fingerprint it had before the
  // size existed.
  if (spec_.tmpfs_size != kDefaultTmpfsSize) canonical["tmpfs_size"] = spec_.tmpfs_size;
  canonical["protected_names"] = ProtectedNames();
  policy.canonical_json_ = canonical.dump();
  policy.fingerprint_ = Sha256Hex(policy.canonical_json_);
  return policy;
}

}  // namespace corral
