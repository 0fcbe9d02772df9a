#include "policy/policy.h"

#include <algorithm>
#include <map>
#include <fcntl.h>
#include <sys/stat.h>

#include <unistd.h>

#include <cerrno>
#include <climits>
#include <optional>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "base/absent_names.h"
#include "base/invariant.h"
#include "base/json_bytes.h"
#include "base/mutant.h"
#include "base/sha256.h"
#include "base/unique_fd.h"
#include "policy/forbid.h"
#include "policy/forbid_walk.h"
#include "policy/path_text.h"
#include "policy/git_identity.h"
#include "policy/linked_worktree.h"
#include "policy/toolchains.h"
#include "policy/home_view.h"

namespace corral {
namespace {

// What a credential store that stat could not reach (EACCES) needs hidden.
// The path is followed component by component (at most 40 links) from `/`.
// A directory the walk may not search blocks it; when it is not the
// caller's, the command (running as the caller, with no capability) cannot
// open it either, and it needs nothing. When it is the caller's, the command
// may chmod it open, so it is hidden whole, and the walk goes on past it
// only where no lookup inside it is needed: a ".." straight after it (the
// directory is real, so its parent is lexical). A name to look up inside it
// could be a link to anywhere: `unknowable` names the directory, and the
// caller refuses the policy. A store whose walk followed no link is already
// masked at its own path, and needs nothing here.
struct BlockedStore {
  std::vector<std::string> hide;  // the blocked directories, then where the store ends
  std::optional<std::string> unknowable;
};

BlockedStore WalkBlockedStore(const std::string& path) {
  BlockedStore out;
  std::vector<std::string> rest = PathSegments(path);
  std::reverse(rest.begin(), rest.end());  // the next component last
  std::string at = "/";  // resolved so far: no symlink in it, so ".." is lexical
  std::optional<std::string> blocked;  // a caller's directory the walk is inside, unsearched
  bool followed = false;
  for (int links = 0; !rest.empty();) {
    std::string name = std::move(rest.back());
    rest.pop_back();
    if (name == "." || name.empty()) continue;
    if (name == "..") {
      // The kernel needs search permission on `at` to take ".." there.
      if (!blocked && at != "/" && ::access(at.c_str(), X_OK) != 0 && errno == EACCES) {
        struct stat dir;
        if (::stat(at.c_str(), &dir) != 0 || dir.st_uid != ::getuid()) return BlockedStore{};
        out.hide.push_back(at);
      }
      if (at != "/") at = at.substr(0, std::max<size_t>(at.rfind('/'), 1));
      if (blocked && !IsWithin(at, *blocked)) blocked.reset();
      continue;
    }
    if (blocked) {
      out.unknowable = *blocked;
      return out;
    }
    std::string next = at == "/" ? "/" + name : at + "/" + name;
    struct stat st;
    if (::lstat(next.c_str(), &st) != 0) {
      struct stat dir;
      if (errno != EACCES || ::stat(at.c_str(), &dir) != 0 || dir.st_uid != ::getuid()) return BlockedStore{};
      out.hide.push_back(at);
      blocked = at;
      rest.push_back(std::move(name));
      continue;
    }
    if (!S_ISLNK(st.st_mode)) {
      at = std::move(next);
      continue;
    }
    if (++links > 40) return BlockedStore{};
    char target[PATH_MAX];
    ssize_t length = ::readlink(next.c_str(), target, sizeof target - 1);
    if (length <= 0) return BlockedStore{};
    std::string link(target, static_cast<size_t>(length));
    followed = true;
    if (link.starts_with("/")) at = "/";
    std::vector<std::string> parts = PathSegments(link.starts_with("/") ? link : "/" + link);
    for (auto part = parts.rbegin(); part != parts.rend(); ++part) rest.push_back(*part);
  }
  if (!followed || out.hide.empty()) return BlockedStore{};
  out.hide.push_back(at);  // where the store ends, once the command opens the way
  return out;
}

bool IsValidEnvName(std::string_view name) {
  if (name.empty() || (name[0] >= '0' && name[0] <= '9')) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
}

// corral mounts its own /dev (with /dev/shm and /dev/pts) and /proc over
// whatever the view would show there: a grant at or under them would be
// listed and do nothing, or show a host node the private ones replace.
Result<void> CheckNotUnderOwnMounts(const std::string& flag, const std::string& path) {
  const std::string prefix = flag + " " + path + ": the sandbox has its own ";
  if (IsWithin(path, "/dev")) {
    return Error(ErrorKind::kUsage, prefix + "/dev (a minimal set of devices, with a private /dev/shm and /dev/pts), "
                                             "mounted over it, so the grant would do nothing; for shared or scratch "
                                             "files use /tmp or the workspace instead");
  }
  if (IsWithin(path, "/proc")) {
    return Error(ErrorKind::kUsage, prefix + "/proc (a fresh one, showing only the sandbox's own processes), "
                                             "mounted over it, so the grant would do nothing; the host's processes "
                                             "are not shown inside the sandbox");
  }
  return {};
}

// Which of the credential stores certainly do not exist, from one listing
// of each directory they lie in (base/absent_names.h) instead of a stat
// each: most stores are absent, many under the same directory, and a
// missing directory answers for everything under it. A directory the caller
// may not search gives no listing, and its stores are stat-ed as before.
class StoreListings {
 public:
  // True when a stat(2) of `path` would certainly fail with ENOENT or
  // ENOTDIR: its directory's listing lacks it, or that directory is itself
  // absent by a listing read before, or opening it says so.
  bool CertainlyAbsent(const std::string& path) { return Absent(path, Unlisted::kLook); }

 private:
  struct Dir {
    bool absent = false;  // the directory is not there: nothing under it is
    AbsentNames listing;
  };
  // What a directory not looked at yet answers: looked at now, or nothing
  // (Look asks so of a directory's parent: the home's own parent, /home or
  // /tmp, can be large, and the home is opened anyway).
  enum class Unlisted { kLook, kUnknown };
  bool Absent(const std::string& path, Unlisted unlisted) {
    size_t slash = path.rfind('/');
    if (slash == std::string::npos || slash == 0) return false;
    std::string dir = path.substr(0, slash);
    auto known = dirs_.find(dir);
    if (known == dirs_.end()) {
      if (unlisted == Unlisted::kUnknown) return false;
      known = dirs_.emplace(dir, Look(dir)).first;
    }
    return known->second.absent || known->second.listing.CertainlyAbsent(std::string_view(path).substr(slash + 1));
  }
  Dir Look(const std::string& dir) {
    Dir found;
    if (Absent(dir, Unlisted::kUnknown)) {
      found.absent = true;
      return found;
    }
    // Through symlinks, as stat(2) of the store goes.
    UniqueFd fd(::open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!fd) {
      found.absent = errno == ENOENT || errno == ENOTDIR;
      return found;
    }
    // Only a directory the caller may search, or stat would have said
    // EACCES, not ENOENT (a blocked store, walked below).
    if (::faccessat(fd.get(), ".", X_OK, AT_EACCESS) == 0) found.listing = AbsentNames::Read(fd.get());
    return found;
  }
  std::map<std::string, Dir> dirs_;
};

}  // namespace

std::string_view GrantOriginName(GrantOrigin origin) {
  switch (origin) {
    case GrantOrigin::kSystem: return "system";
    case GrantOrigin::kWorkspace: return "workspace";
    case GrantOrigin::kWorktree: return "worktree";
    case GrantOrigin::kFlag: return "flag";
    case GrantOrigin::kHome: return "home";
    case GrantOrigin::kCredential: return "credential";
    case GrantOrigin::kUserConfig: return "user-config";
    case GrantOrigin::kProjectConfig: return "project-config";
    case GrantOrigin::kToolchain: return "toolchain";
    case GrantOrigin::kUnixSocket: return "unix";
    case GrantOrigin::kScratch: return "scratch";
  }
  return "flag";
}

std::string_view Policy::network_name() const {
  return egress_.host_ports() ? "ports" : NetworkModeName(network_);
}

const std::vector<std::string>& DefaultEnvAllowlist() {
  static const std::vector<std::string> names = {"PATH", "HOME", "TERM", "LANG", "LC_ALL", "LC_CTYPE", "TZ"};
  return names;
}

namespace {

// A scratch directory is an executor's own and holds no protected path, so
// it may neither be nor hold another grant (whose protected paths would go
// unguarded), nor lie inside one: every executor of a set has the set's
// grants, so one that showed this scratch would let another executor read
// or write this one's $HOME (a ~/.bashrc it plants runs in this one's
// calls). `grants` is every other grant.
Status CheckScratchAlone(const std::vector<PathGrant>& scratch_grants, const std::map<std::string, PathGrant>& grants) {
  for (const PathGrant& own : scratch_grants) {
    const std::string& scratch = own.path.path;
    for (const PathGrant& other : scratch_grants) {
      if (&other != &own && (IsWithin(other.path.path, scratch) || IsWithin(scratch, other.path.path))) {
        return Error(ErrorKind::kPolicy, "the executor's scratch " + scratch + " and " + other.path.path +
                                             " overlap; each must be a directory of its own");
      }
    }
    for (const auto& [path, grant] : grants) {
      if (IsWithin(path, scratch)) {
        return Error(ErrorKind::kPolicy, "the executor's scratch " + scratch + " is or holds " + path +
                                             ", which the policy grants; the scratch must be a directory of its own");
      }
      if (IsWithin(scratch, path)) {
        return Error(ErrorKind::kPolicy, "the executor's scratch " + scratch + " lies inside " + path +
                                             ", which every executor of the set is granted: another executor could "
                                             "reach this one's $HOME there; put the scratch root outside every grant");
      }
    }
  }
  return Ok();
}

}  // namespace

std::vector<std::string> Policy::WritableRoots() const {
  std::vector<std::string> roots;
  for (const PathGrant& grant : grants_) {
    if (Has(grant.access, Access::kWrite) && grant.origin != GrantOrigin::kScratch) roots.push_back(grant.path.path);
  }
  return roots;
}

std::vector<std::string> Policy::CredentialGrants() const {
  std::vector<std::string> paths;
  for (const PathGrant& grant : grants_) {
    if (grant.origin == GrantOrigin::kCredential) paths.push_back(grant.path.path);
  }
  return paths;
}

std::vector<std::string> Policy::UnixSockets() const {
  std::vector<std::string> paths;
  for (const PathGrant& grant : grants_) {
    if (grant.origin == GrantOrigin::kUnixSocket) paths.push_back(grant.path.path);
  }
  return paths;
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

#define CORRAL_DEFINE_SETTER(member, Setter, setting)              \
  PolicyBuilder& PolicyBuilder::Setter(SettingArg<setting> value) { \
    spec_.member = SettingFromArg(setting, value);                  \
    return *this;                                                   \
  }
CORRAL_SANDBOX_SETTINGS(CORRAL_DEFINE_SETTER)
#undef CORRAL_DEFINE_SETTER
#define CORRAL_DEFINE_ADDER(member, Adder, setting)          \
  PolicyBuilder& PolicyBuilder::Adder(std::string value) { \
    spec_.member.push_back(std::move(value));              \
    return *this;                                          \
  }
CORRAL_SANDBOX_LISTS(CORRAL_DEFINE_ADDER)
#undef CORRAL_DEFINE_ADDER
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
PolicyBuilder& PolicyBuilder::PinSha256(std::string hex) {
  spec_.pin_sha256 = std::move(hex);
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

Result<Policy> BuildPolicy(const HostContext& host, const PolicySpec& spec) {
  return PolicyBuilder(host, spec).Build();
}

Result<Policy> PolicyBuilder::Build() const {
  Policy policy;
  policy.host_ = host_;
  policy.spec_ = spec_;
  policy.network_ = spec_.network;
  policy.enforcement_ = spec_.best_effort ? Enforcement::kBestEffort : Enforcement::kRequired;
  for (const std::string& rung : spec_.accept_rung) {
    if (!IsAcceptableRungName(rung)) {
      return Error(ErrorKind::kUsage, "--accept-rung: \"" + rung + "\"" +
                                                    " is not a rung that can be accepted; the names are " +
                                                    AcceptableRungNamesText());
    }
  }
  policy.mode_ = spec_.mode;
  policy.home_mode_ = spec_.home;
  if (spec_.mode == Mode::kDangerFullAccess && !spec_.acknowledge_danger && !MutantActive(Mutant::kDangerAck)) {
    return Error(ErrorKind::kPolicy,
                 "danger-full-access runs the command with no sandbox at all: no namespaces, no Landlock, no "
                 "seccomp, the real environment. Pass --i-understand-danger-full-access (or set "
                 "sandbox.i_understand_danger_full_access = true) to accept that");
  }
  CORRAL_ASSIGN_OR_RETURN(
      policy.egress_,
      ReadEgressRules({spec_.allow_host, spec_.deny_host, spec_.allow_private, spec_.allow_local, spec_.allow_port,
                       spec_.allow_dns},
                      spec_.network));
  if ((policy.egress_.active() || !policy.egress_.local_ports.empty() || policy.egress_.host_ports()) &&
      spec_.mode == Mode::kDangerFullAccess) {
    return Error(ErrorKind::kUsage,
                 "--allow-host, --allow-local, --allow-port: danger-full-access runs the command with no sandbox, "
                 "so nothing narrows its network; use another mode with the network rules");
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
    // A linked worktree's git needs its repository: granted as the
    // workspace is, without exec; its hooks and config stay protected.
    std::string note;
    std::optional<std::string> repository = LinkedWorktreeRepository(policy.workspace_->path, host_, &note);
    if (!note.empty()) policy.notes_.push_back(note);
    if (repository) {
      Result<PinnedPath> pinned = PinDerivedPath(*repository, "the worktree's repository");
      if (pinned.ok() && pinned->is_dir()) {
        add(*pinned, narrow(Access::kRead | Access::kWrite), GrantOrigin::kWorktree);
        user_roots.push_back(pinned->path);
      } else {
        policy.notes_.push_back("the worktree's repository " + *repository + " could not be pinned; it is not granted");
      }
    }
  }
  std::vector<std::string> flag_paths;
  std::vector<std::string> write_grants;  // the --allow-write paths, pinned
  struct Requested {
    const std::vector<std::string>& paths;
    Access access;
    std::string flag;
    GrantOrigin origin;
  };
  std::vector<Requested> requested = {
      {spec_.allow_read, Access::kRead, std::string(kAllowReadList.flag), GrantOrigin::kFlag},
      {spec_.allow_write, Access::kRead | Access::kWrite, std::string(kAllowWriteList.flag), GrantOrigin::kFlag},
      {spec_.allow_exec, Access::kRead | Access::kExec, std::string(kAllowExecList.flag), GrantOrigin::kFlag},
      {spec_.allow_credential, Access::kRead, std::string(kAllowCredentialList.flag), GrantOrigin::kCredential},
      {spec_.allow_unix, Access::kRead, std::string(kAllowUnixList.flag), GrantOrigin::kUnixSocket},
      {spec_.scratch_dirs, Access::kRead | Access::kWrite, "the executor's scratch", GrantOrigin::kScratch},
  };
  // Each toolchain's directories, granted as --allow-exec grants them; its
  // secret files join the credential stores below.
  CORRAL_ASSIGN_OR_RETURN(std::vector<const Toolchain*> toolchains, ResolveToolchains(spec_.allow_toolchain, host_));
  std::vector<ToolchainLayout> layouts;
  layouts.reserve(toolchains.size());  // `requested` holds references to each layout's dirs
  for (const Toolchain* toolchain : toolchains) {
    layouts.push_back(LayOut(*toolchain, host_));
    if (layouts.back().dirs.empty()) {
      std::string where;
      for (const Toolchain::Dir& dir : toolchain->dirs) {
        std::string one = dir.path.empty() ? "$" + std::string(dir.variable)
                          : dir.variable.empty() ? std::string(dir.path)
                                                 : std::string(dir.path) + " ($" + std::string(dir.variable) + ")";
        where += (where.empty() ? "" : ", ") + one;
      }
      return Error(ErrorKind::kUsage, "--allow-toolchain " + std::string(toolchain->name) +
                                          ": it is not installed here (none of " + where + " is a directory in " +
                                          host_.home + ")");
    }
    requested.push_back({layouts.back().dirs, Access::kRead | Access::kExec,
                         "--allow-toolchain " + std::string(toolchain->name), GrantOrigin::kToolchain});
  }
  // The stores, as absolute paths, in $HOME and in the passwd entry's home
  // when $HOME names another directory.
  std::vector<std::string> homes = {host_.home};
  if (!host_.passwd_home.empty() && host_.passwd_home != host_.home) homes.push_back(host_.passwd_home);
  std::vector<std::string> credentials;
  // A home that does not exist (uid 65534's /nonexistent) holds no store:
  // one stat of it says so for all of them. Only ENOENT and ENOTDIR, which
  // every path under it would meet too; a home it may not search (EACCES)
  // still goes store by store, to the walk of blocked stores below.
  std::vector<bool> in_absent_home;  // one for each store of the homes
  for (const std::string& home : homes) {
    struct stat home_st;
    const bool absent = ::stat(home.c_str(), &home_st) != 0 && (errno == ENOENT || errno == ENOTDIR);
    for (const std::string& pattern : HomeCredentialPatterns()) {
      credentials.push_back(HomePath(pattern, home));
      in_absent_home.push_back(absent);
    }
  }
  for (const ToolchainLayout& layout : layouts) {
    credentials.insert(credentials.end(), layout.secrets.begin(), layout.secrets.end());
  }
  // --home real shows every toolchain that exists: their secrets too.
  if (spec_.home == HomeMode::kReal) {
    for (const Toolchain& toolchain : Toolchains()) {
      if (std::find(toolchains.begin(), toolchains.end(), &toolchain) != toolchains.end()) continue;
      std::vector<std::string> secrets = LayOut(toolchain, host_).secrets;
      credentials.insert(credentials.end(), secrets.begin(), secrets.end());
    }
  }
  // A store that is a symlink, or lies under one (~/.gnupg -> dotfiles/gnupg),
  // keeps its secrets where it points: that target is a store too, so a
  // grant that shows it (~/dotfiles, or the workspace there) hides it, and a
  // grant naming it needs --allow-credential. Only a file or directory that
  // exists now: a device (~/.bash_history -> /dev/null) holds nothing.
  std::map<std::string, std::string> link_of;  // resolved target -> the store's path in the home
  StoreListings store_listings;
  for (size_t i = 0, n = credentials.size(); i < n; ++i) {
    if (i < in_absent_home.size() && in_absent_home[i]) continue;
    if (store_listings.CertainlyAbsent(credentials[i])) continue;
    char resolved[PATH_MAX];
    struct stat st;
    // Most stores do not exist: one stat says so, where realpath would read
    // every component as a link first. What stat cannot reach, realpath
    // cannot either, and what is neither directory nor file is skipped below.
    if (::stat(credentials[i].c_str(), &st) != 0) {
      // A store whose links lead into a directory the caller cannot search
      // (~/.ssh -> proj/locked/ssh, locked 000): the command, running as the
      // caller, may chmod its way in, so that directory is a store, whole.
      if (errno == EACCES && !MutantActive(Mutant::kUnsearchableStores)) {
        BlockedStore blocked = WalkBlockedStore(credentials[i]);
        if (blocked.unknowable) {
          return Error(ErrorKind::kPolicy, "the credential store " + credentials[i] + " leads into " +
                                               *blocked.unknowable +
                                               ", which you may not search, so corral cannot tell where it ends; "
                                               "give yourself search permission there (chmod u+x " +
                                               *blocked.unknowable + ") or remove the link");
        }
        for (const std::string& hide : blocked.hide) {
          if (link_of.try_emplace(hide, credentials[i]).second) credentials.push_back(hide);
        }
      }
      continue;
    }
    if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode)) continue;
    if (::realpath(credentials[i].c_str(), resolved) == nullptr || credentials[i] == resolved) continue;
    if (::stat(resolved, &st) != 0 || (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode))) continue;
    if (link_of.try_emplace(resolved, credentials[i]).second) credentials.emplace_back(resolved);
  }
  auto named_store = [&](const std::string& store) {
    auto link = link_of.find(store);
    return link == link_of.end() ? store : store + " (where " + link->second + " points)";
  };
  auto store_of = [&](const std::string& path) -> const std::string* {
    for (const std::string& store : credentials) {
      if (IsWithin(path, store)) return &store;
    }
    return nullptr;
  };
  if (policy.workspace_) {
    if (const std::string* store = store_of(policy.workspace_->path); store != nullptr) {
      return Error(ErrorKind::kPolicy, "refusing to use " + policy.workspace_->path +
                                           " as the workspace: it lies inside the credential store " + named_store(*store) +
                                           ", which corral hides from every grant");
    }
  }
  std::vector<std::string> allowed_credentials;
  std::vector<std::pair<std::string, std::string>> user_grants;  // (flag, path), for the checks below
  std::vector<PathGrant> scratch_grants;                          // an executor's own, added last
  // A grant a config file wrote says which file; the rest are the request's.
  auto origin_of = [&](const Requested& request, const std::string& path) {
    auto wrote = [&](const std::vector<std::string>& grants) {
      return std::find(grants.begin(), grants.end(), path) != grants.end();
    };
    if (request.origin != GrantOrigin::kFlag) return request.origin;
    if (wrote(spec_.user_config_grants)) return GrantOrigin::kUserConfig;
    if (wrote(spec_.project_config_grants)) return GrantOrigin::kProjectConfig;
    return request.origin;
  };
  for (const Requested& request : requested) {
    const bool credential = request.origin == GrantOrigin::kCredential;
    for (const std::string& path : request.paths) {
      CORRAL_ASSIGN_OR_RETURN(PinnedPath pinned, PinPath(path, request.flag));
      if (request.origin == GrantOrigin::kUnixSocket) {
        struct stat st;
        if (::lstat(pinned.path.c_str(), &st) != 0 || !S_ISSOCK(st.st_mode)) {
          return Error(ErrorKind::kUsage, request.flag + " " + pinned.path +
                                              ": not a unix socket; grant a file or directory with --allow-read");
        }
      }
      if (pinned.path == "/") {
        return Error(ErrorKind::kUsage, request.flag + " /: granting the whole filesystem defeats the sandbox; "
                                                       "grant the trees the command needs");
      }
      if (!MutantActive(Mutant::kUselessGrants)) CORRAL_TRY(CheckNotUnderOwnMounts(request.flag, pinned.path));
      const std::string* store = store_of(pinned.path);
      if (credential && store == nullptr) {
        return Error(ErrorKind::kUsage, "--allow-credential " + pinned.path +
                                            ": not a credential store corral hides; grant it with --allow-read");
      }
      if (!credential && store != nullptr && !MutantActive(Mutant::kCredentialGrants)) {
        return Error(ErrorKind::kPolicy, request.flag + " " + pinned.path + ": " +
                                             (pinned.path == *store ? "it is" : "it lies inside") +
                                             " the credential store " + named_store(*store) +
                                             ", which corral hides from every grant; pass --allow-credential " +
                                             pinned.path + " to let the command read it (audited)");
      }
      if (read_only && Has(request.access, Access::kWrite)) {
        policy.notes_.push_back(request.flag + " " + pinned.path + " is read-only under read-only mode");
      }
      if (credential) allowed_credentials.push_back(pinned.path);
      if (&request.paths == &spec_.allow_write) write_grants.push_back(pinned.path);
      flag_paths.push_back(pinned.path);
      user_roots.push_back(pinned.path);
      user_grants.emplace_back(request.flag, pinned.path);
      if (request.origin == GrantOrigin::kScratch) {  // joins the grants once checked against all of them
        scratch_grants.push_back(PathGrant{pinned, narrow(request.access), GrantOrigin::kScratch});
        continue;
      }
      add(pinned, narrow(request.access), origin_of(request, pinned.path));
    }
  }
  if (spec_.home == HomeMode::kReal) {
    // The private home, plus the toolchains and caches that exist, as they
    // are: a symlinked entry would show what it points at, so it is left out.
    if (MutantActive(Mutant::kHomeView)) {  // the home_view mutant: the whole real home instead
      CORRAL_ASSIGN_OR_RETURN(PinnedPath whole, PinDerivedPath(host_.home, "--home real"));
      add(whole, Access::kRead, GrantOrigin::kHome);
      user_roots.push_back(whole.path);
    }
    for (const HomeEntry& entry : HomeAllowlist()) {
      std::string path = HomePath(entry.path, host_.home);
      struct stat st;
      if (::lstat(path.c_str(), &st) != 0) continue;
      Result<PinnedPath> pinned = PinDerivedPath(path, "--home real");
      if (!pinned.ok() || (!pinned->is_dir() && pinned->type != FileType::kRegular)) {
        policy.notes_.push_back("--home real leaves out " + path + ": a symlink or not a plain file or directory");
        continue;
      }
      add(*pinned, entry.access, GrantOrigin::kHome);
      user_roots.push_back(pinned->path);
    }
  }
  // A grant a forbid_read pattern hides (itself or a directory above it)
  // would do nothing, or show what the pattern hides: refused either way.
  if (policy.workspace_) user_grants.emplace_back("the workspace", policy.workspace_->path);
  for (const std::string& pattern : spec_.forbid_read) {
    CORRAL_ASSIGN_OR_RETURN(std::string normalized, NormalizeForbidPattern(pattern, host_.home));
    std::vector<std::string> absolute;
    if (normalized.front() == '/') {
      absolute.push_back(normalized);
    } else {
      for (const std::string& root : user_roots) absolute.push_back(QuoteLiteral(root) + "/" + normalized);
    }
    for (const auto& [flag, path] : user_grants) {
      for (std::string above = path; !above.empty(); above = above.substr(0, above.rfind('/'))) {
        bool hidden = std::any_of(absolute.begin(), absolute.end(),
                                  [&](const std::string& p) { return MatchesForbidPattern(p, above); });
        if (!hidden || MutantActive(Mutant::kUselessGrants)) continue;
        return Error(ErrorKind::kPolicy, flag + " " + path + ": forbid_read " + pattern + " hides " + above +
                                             ", so the grant would show nothing of it; drop one of the two");
      }
    }
  }
  // --overlay-root: a write grant outside the workspace, overlaid like it.
  for (const std::string& path : spec_.overlay_root) {
    const std::string flag(kOverlayRootList.flag);
    CORRAL_ASSIGN_OR_RETURN(PinnedPath pinned, PinPath(path, flag));
    if (!pinned.is_dir()) return Error(ErrorKind::kUsage, flag + " " + pinned.path + ": not a directory");
    if (std::find(write_grants.begin(), write_grants.end(), pinned.path) == write_grants.end()) {
      return Error(ErrorKind::kUsage, flag + " " + pinned.path +
                                          ": not an --allow-write grant of this run; only a root the command may "
                                          "write can be overlaid (grant it with --allow-write " + pinned.path + ")");
    }
    if (read_only) {
      return Error(ErrorKind::kUsage, flag + " " + pinned.path + ": read-only mode writes nothing to overlay");
    }
    if (policy.workspace_ && (IsWithin(pinned.path, policy.workspace_->path) ||
                              IsWithin(policy.workspace_->path, pinned.path))) {
      return Error(ErrorKind::kUsage, flag + " " + pinned.path +
                                          ": it holds or lies inside the workspace, which --overlay already "
                                          "overlays; name roots outside it");
    }
    for (const PinnedPath& other : policy.overlay_roots_) {
      if (IsWithin(pinned.path, other.path) || IsWithin(other.path, pinned.path)) {
        return Error(ErrorKind::kUsage, flag + " " + pinned.path + ": it holds or lies inside the overlay root " +
                                            other.path + "; name each tree once");
      }
    }
    policy.overlay_roots_.push_back(pinned);
  }
  if (read_only && policy.workspace_) policy.notes_.push_back("the workspace is read-only under read-only mode");

  if (!MutantActive(Mutant::kScratchAlone)) CORRAL_TRY(CheckScratchAlone(scratch_grants, by_path));
  for (const PathGrant& scratch : scratch_grants) add(scratch.path, scratch.access, GrantOrigin::kScratch);

  // Effective access is the union along the path, as Landlock computes it; a
  // grant that adds nothing to its enclosing grant is redundant.
  for (auto& [path, grant] : by_path) {
    const PathGrant* parent = nullptr;
    for (const PathGrant& candidate : policy.grants_) {
      if (IsWithin(path, candidate.path.path)) parent = &candidate;
    }
    if (parent != nullptr) {
      grant.access |= parent->access;
      // (A credential store stays listed: it is announced and audited.)
      if (grant.access == parent->access && grant.origin != GrantOrigin::kWorkspace &&
          grant.origin != GrantOrigin::kCredential) {
        continue;
      }
    }
    policy.grants_.push_back(grant);
  }

  // Landlock unions rights down the path: a private /tmp or $HOME above a
  // grant without exec loses its own exec right (see confine/mount_plan.h).
  for (const std::string& tree : {std::string("/tmp"), host_.home}) {
    if (policy.GrantFor(tree) != nullptr) continue;  // the host's tree is shown: no tmpfs there
    for (const PathGrant& grant : policy.grants_) {
      if (!IsWithin(grant.path.path, tree) || Has(grant.access, Access::kExec)) continue;
      policy.notes_.push_back("nothing in the private " + tree + " is executable in this run: " + grant.path.path +
                              " lies under it without exec (--allow-exec it to keep both executable)");
      break;
    }
  }

  // Mask /etc secrets, unless the user explicitly granted one of them. A grant
  // strictly inside a masked directory would lift the mask from its siblings
  // too, so it is refused: the user must name the directory itself.
  // For root, /etc is seen as others see it (Policy::etc_view) unless a
  // grant names /etc or a path in it: then the walk's masks, which such a
  // grant can lift one by one.
  const bool grant_in_etc = std::any_of(flag_paths.begin(), flag_paths.end(),
                                        [](const std::string& p) { return IsWithin(p, "/etc"); });
  if (spec_.system_roots && host_.uid == 0 && !grant_in_etc) {
    policy.etc_view_ = EtcView::kAsOthers;
  } else if (spec_.system_roots) {
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
  policy.masks_root_only_proc_ = host_.uid == 0;
  // corral's own state (config, sessions, quarantine, compiled policies) may
  // never be writable inside: the next run would obey what the command wrote.
  std::vector<std::string> patterns;
  for (const std::string& dir : host_.OwnStateDirs()) {
    const PathGrant* grant = policy.GrantFor(dir);
    if (grant != nullptr && Has(grant->access, Access::kWrite) && !MutantActive(Mutant::kStateWriteGrant)) {
      return Error(ErrorKind::kPolicy, "refusing to grant write on " + grant->path.path +
                                           ": it holds corral's own state (" + dir +
                                           "), which the next run would trust; grant a narrower tree");
    }
    // A grant inside it would be a way in of its own, past the masks: the
    // sessions, the sweep journal or the config, each of which the next run
    // trusts. Refused whatever its access.
    for (const PathGrant& inner : policy.grants_) {
      if (IsWithin(inner.path.path, dir) && !MutantActive(Mutant::kStateInnerGrant)) {
        return Error(ErrorKind::kPolicy, "refusing to grant " + inner.path.path + ": it lies inside corral's own state (" +
                                             dir + "), which the next run trusts; nothing there is the command's");
      }
    }
    if (!MutantActive(Mutant::kStateMasks)) patterns.push_back(QuoteLiteral(dir));  // and hidden where a read grant shows it
  }
  for (const std::string& file : spec_.own_files) {
    if (!MutantActive(Mutant::kOwnFilesMasks)) patterns.push_back(QuoteLiteral(file));
  }
  for (const std::string& pattern : spec_.forbid_read) {
    CORRAL_ASSIGN_OR_RETURN(std::string normalized, NormalizeForbidPattern(pattern, host_.home));
    policy.forbid_patterns_.push_back(normalized);
    patterns.push_back(pattern);
  }
  ForbidScope scope;
  scope.user_roots = user_roots;
  for (const PathGrant& grant : policy.grants_) scope.visible_roots.push_back(grant.path.path);
  CORRAL_ASSIGN_OR_RETURN(ForbidExpansion forbidden, ExpandForbidden(patterns, host_.home, scope));
  std::vector<MaskedPath> hidden = std::move(forbidden.masks);
  for (std::string& note : forbidden.notes) policy.notes_.push_back(std::move(note));
  // The credential stores any grant shows, except those --allow-credential
  // names. A store that holds a named credential would hide it (and a mask
  // cannot hold a bind): the store itself must be named.
  // The stores are paths: each is a pattern that matches only itself, so
  // one that neither lies in a grant nor holds one can match nothing the
  // expansion walks; those (most, under a private home) are left out before
  // it, which would normalize and match each of them.
  std::vector<std::string> store_patterns;
  for (const std::string& store : credentials) {
    const bool near_a_grant = std::any_of(scope.visible_roots.begin(), scope.visible_roots.end(),
                                          [&](const std::string& root) {
                                            return IsWithin(store, root) || IsWithin(root, store);
                                          });
    if (near_a_grant) store_patterns.push_back(QuoteLiteral(store));
  }
  CORRAL_ASSIGN_OR_RETURN(ForbidExpansion stores, ExpandForbidden(store_patterns, host_.home, scope));
  for (std::string& note : stores.notes) policy.notes_.push_back(std::move(note));
  for (MaskedPath& store : stores.masks) {
    bool allowed = false;
    for (const std::string& path : allowed_credentials) {
      // The store's link in the home is shown with the target it points at.
      auto link = std::find_if(link_of.begin(), link_of.end(), [&](const auto& entry) {
        return entry.second == store.path && IsWithin(entry.first, path);
      });
      if (IsWithin(store.path, path) || link != link_of.end()) {
        allowed = true;
      } else if (IsWithin(path, store.path)) {
        return Error(ErrorKind::kUsage, "--allow-credential " + path + " lies inside " + store.path +
                                            ", which another grant shows and corral hides; name " + store.path +
                                            " itself");
      }
    }
    if (!allowed && !MutantActive(Mutant::kCredentialMasks)) hidden.push_back(std::move(store));
  }
  for (MaskedPath& mask : hidden) {
    bool duplicate = std::any_of(policy.masks_.begin(), policy.masks_.end(),
                                 [&](const MaskedPath& m) { return IsWithin(mask.path, m.path); });
    if (!duplicate) policy.masks_.push_back(std::move(mask));
  }
  // A mask inside another is hidden already, and could not be mounted: its
  // mount point lies in the empty, unreadable directory over its parent
  // (root's /etc masks under --forbid-read /etc).
  std::sort(policy.masks_.begin(), policy.masks_.end(),
            [](const MaskedPath& a, const MaskedPath& b) { return a.path < b.path; });
  std::vector<MaskedPath> outermost;
  for (MaskedPath& mask : policy.masks_) {
    if (std::any_of(outermost.begin(), outermost.end(), [&](const MaskedPath& outer) {
          return IsWithin(mask.path, outer.path);
        })) {
      continue;
    }
    outermost.push_back(std::move(mask));
  }
  policy.masks_ = std::move(outermost);

  for (size_t i = 0; i < policy.grants_.size(); ++i) {
    CORRAL_INVARIANT(policy.grants_[i].path.path != "/", "no grant covers the whole filesystem");
    CORRAL_INVARIANT(i == 0 || policy.grants_[i - 1].path.path < policy.grants_[i].path.path,
                     "grants are sorted, parents before children, without duplicates");
    CORRAL_INVARIANT(!read_only || !Has(policy.grants_[i].access, Access::kWrite),
                     "read-only mode leaves no writable grant");
  }
  policy.home_gitconfig_ = GitIdentityConfig(policy.host_.home);
  policy.protected_ = DiscoverProtected(policy.WritableRoots());
  if (!policy.protected_.moved_roots.empty() && !MutantActive(Mutant::kDiscoveryMoved)) {
    return Error(ErrorKind::kPolicy, "protected paths: " + policy.protected_.moved_roots.front() +
                                         " moved while corral looked in it for protected paths (another run may be "
                                         "renaming it); the command was not run: run it again");
  }
  for (const PinnedPath& root : policy.protected_.roots) {
    const PathGrant* grant = policy.GrantFor(root.path);
    if (grant != nullptr && grant->path.path == root.path && grant->path.id.ino != 0 && !(grant->path.id == root.id)) {
      return Error(ErrorKind::kPolicy, "protected paths: " + root.path +
                                           " moved after the policy pinned it (another run may be renaming it); the "
                                           "command was not run: run it again");
    }
  }

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
  // The limits: in range whichever vocabulary set them (a PolicyBuilder
  // caller too).
  auto limit = [](const LimitSetting& setting, const std::optional<uint64_t>& value) -> Status {
    if (value && (*value < setting.minimum || *value > setting.maximum)) {
      return Error(ErrorKind::kUsage, std::string(setting.flag) + " " + LimitText(setting, *value) +
                                          ": must be between " + LimitText(setting, setting.minimum) + " and " +
                                          LimitText(setting, setting.maximum));
    }
    return Ok();
  };
  CORRAL_TRY(limit(kMaxProcsSetting, spec_.max_procs));
  CORRAL_TRY(limit(kMaxMemorySetting, spec_.max_memory));
  CORRAL_TRY(limit(kMaxFileSizeSetting, spec_.max_file_size));
  CORRAL_TRY(limit(kMaxOpenFilesSetting, spec_.max_open_files));
  CORRAL_TRY(limit(kMaxCpusSetting, spec_.max_cpus));
  if (spec_.max_cpu_seconds && (*spec_.max_cpu_seconds < kMaxCpuSecondsSetting.minimum ||
                                *spec_.max_cpu_seconds > kMaxCpuSecondsSetting.maximum)) {
    return Error(ErrorKind::kUsage, "--max-cpu-seconds: must be between 1 and " +
                                        std::to_string(kMaxCpuSecondsSetting.maximum.count()) + " seconds");
  }
  policy.limits_.procs = spec_.max_procs;
  policy.limits_.memory_bytes = spec_.max_memory;
  if (spec_.max_cpu_seconds) policy.limits_.cpu_seconds = static_cast<uint64_t>(spec_.max_cpu_seconds->count());
  policy.limits_.file_size_bytes = spec_.max_file_size;
  policy.limits_.open_files = spec_.max_open_files;
  policy.limits_.milli_cpus = spec_.max_cpus;
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
  canonical["credentials"] = policy.CredentialGrants();
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
  // Only when set, likewise: a policy without limits keeps its fingerprint.
  if (policy.limits_.any()) {
    auto value = [](const std::optional<uint64_t>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
    canonical["limits"] = {{"procs", value(policy.limits_.procs)},
                           {"memory", value(policy.limits_.memory_bytes)},
                           {"cpu_seconds", value(policy.limits_.cpu_seconds)},
                           {"file_size", value(policy.limits_.file_size_bytes)},
                           {"open_files", value(policy.limits_.open_files)}};
  }
  if (!policy.egress_.allow_text.empty() || !policy.egress_.deny_text.empty() || !policy.egress_.local_ports.empty()) {
    canonical["egress"] = {{"allow_host", policy.egress_.allow_text},
                           {"deny_host", policy.egress_.deny_text},
                           {"allow_private", policy.egress_.private_text},
                           {"allow_local", policy.egress_.local_ports}};
  }
  // A key of its own: policies without ports keep their fingerprints.
  if (policy.egress_.host_ports()) {
    canonical["host_ports"] = {{"allow_port", policy.egress_.connect_ports}, {"allow_dns", policy.egress_.dns_names}};
  }
  canonical["protected_names"] = ProtectedNames();
  // Paths are bytes: a name that is not UTF-8 is kept exactly (json_bytes.h).
  policy.canonical_json_ = EncodeBytes(std::move(canonical)).dump();
  policy.fingerprint_ = Sha256Hex(policy.canonical_json_);
  return policy;
}

}  // namespace corral
