#include "policy/roots.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string_view>
#include <utility>

#include "base/hidden_from_others.h"
#include "base/mutant.h"
#include "base/passwd_home.h"
#include "base/unique_fd.h"
#include "policy/toolchains.h"

namespace corral {
namespace {

struct timespec RealtimeNow() {
  struct timespec now = {};
  ::clock_gettime(CLOCK_REALTIME, &now);
  return now;
}

constexpr std::array<std::string_view, 10> kSystemTrees = {
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/boot", "/opt",
};
// Trees a workspace may never lie in or contain.
constexpr std::array<std::string_view, 13> kRefusedTrees = {
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
    "/etc", "/boot", "/proc", "/sys", "/dev", "/run",
};
// Directories that are refused exactly (things inside them may be projects).
constexpr std::array<std::string_view, 11> kRefusedExact = {
    "/", "/tmp", "/var", "/var/tmp", "/var/lib", "/home", "/opt", "/mnt", "/media", "/srv", "/root",
};

std::string Refusal(const std::string& path, std::string_view why) {
  return "refusing to use " + path + " (" + std::string(why) +
         ") as the workspace: the workspace is granted read, write and exec, which would reach far "
         "beyond one project. Run corral from a project directory, or pass --workspace DIR to name "
         "the project tree, or --no-workspace with --allow-read PATH / --allow-write PATH for "
         "exactly what the command needs";
}

}  // namespace

Result<HostContext> CaptureHostContext() {
  HostContext host;
  char cwd[PATH_MAX];
  if (::getcwd(cwd, sizeof cwd) == nullptr) {
    return Error::FromErrno(ErrorKind::kUsage, "cannot read the working directory", "getcwd", errno);
  }
  host.cwd = cwd;
  host.uid = ::getuid();
  host.gid = ::getgid();
  if (std::optional<std::string> home = PasswdHome(host.uid)) host.passwd_home = CollapseSlashes(*home);
  const char* home = ::getenv("HOME");
  if (home != nullptr && home[0] == '/') {
    host.home = CollapseSlashes(home);
  } else {
    host.home = host.passwd_home.empty() ? "/nonexistent" : host.passwd_home;
  }
  if (const char* path = ::getenv("PATH"); path != nullptr) host.path_env = path;
  for (std::string_view variable : ToolchainVariables()) {
    if (const char* value = ::getenv(std::string(variable).c_str()); value != nullptr) {
      host.toolchain_env.emplace(variable, value);
    }
  }
  // Compare against the physical homes, so a symlinked $HOME is still caught.
  char resolved[PATH_MAX];
  if (::realpath(host.home.c_str(), resolved) != nullptr) host.home = resolved;
  if (!host.passwd_home.empty() && ::realpath(host.passwd_home.c_str(), resolved) != nullptr) {
    host.passwd_home = resolved;
  }
  return host;
}

std::vector<std::string> HostContext::OwnStateDirs() const {
  auto xdg = [this](const char* variable, const char* fallback) {
    const char* value = ::getenv(variable);
    return value != nullptr && value[0] == '/' ? CollapseSlashes(value) + "/corral" : home + fallback;
  };
  std::vector<std::string> dirs = {xdg("XDG_CONFIG_HOME", "/.config/corral"),
                                   xdg("XDG_STATE_HOME", "/.local/state/corral")};
  const char* runtime = ::getenv("XDG_RUNTIME_DIR");
  dirs.push_back(runtime != nullptr && runtime[0] == '/' ? CollapseSlashes(runtime) + "/corral"
                                                         : "/tmp/corral-" + std::to_string(uid));
  return dirs;
}

Result<void> VetWorkspace(const std::string& path, const HostContext& host, WorkspaceSource source) {
  (void)source;  // The same rule governs a derived and an explicit workspace.
  if (MutantActive(Mutant::kWorkspaceVet)) return {};
  if (path == "/") return Error(ErrorKind::kPolicy, Refusal(path, "the filesystem root"));
  for (const std::string& home : {host.home, host.passwd_home}) {
    if (home.empty()) continue;
    if (path == home) return Error(ErrorKind::kPolicy, Refusal(path, "your home directory"));
    if (IsWithin(home, path)) return Error(ErrorKind::kPolicy, Refusal(path, "it holds your home directory"));
  }
  if (path == "/home" || path == "/var/home" || path == "/Users") {
    return Error(ErrorKind::kPolicy, Refusal(path, "it holds home directories"));
  }
  for (std::string_view tree : kRefusedTrees) {
    if (IsWithin(path, tree)) return Error(ErrorKind::kPolicy, Refusal(path, "a system tree"));
  }
  for (std::string_view exact : kRefusedExact) {
    if (path == exact) return Error(ErrorKind::kPolicy, Refusal(path, "a shared system directory"));
  }
  return {};
}

SystemRoots DiscoverSystemRoots() {
  SystemRoots roots;
  for (std::string_view name : kSystemTrees) {
    if (name == "/boot" || name == "/opt") continue;  // refused as workspaces, not granted
    std::string path(name);
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0) continue;
    if (S_ISLNK(st.st_mode)) {
      char target[PATH_MAX];
      ssize_t n = ::readlink(path.c_str(), target, sizeof target - 1);
      if (n <= 0) continue;
      roots.symlinks.push_back({path, std::string(target, static_cast<size_t>(n))});
      continue;
    }
    if (!S_ISDIR(st.st_mode)) continue;
    Access access = name == "/etc" ? Access::kRead : (Access::kRead | Access::kExec);
    roots.trees.push_back({PinnedPath{path, FileIdentity{st.st_dev, st.st_ino}, FileType::kDirectory}, access});
  }
  return roots;
}

namespace {

// Bounds on the walk of /etc for root callers: far above any real /etc
// (a desktop's holds a few thousand entries), low enough to stay quick.
constexpr int kEtcWalkMaxEntries = 200000;
constexpr int kEtcWalkMaxDepth = 64;

bool IsDotOrDotDot(const char* name) {
  return name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0'));
}

struct RootOnlyWalk {
  ListingCache* cache = nullptr;
  struct timespec began = {};
  int entries = 0;
  std::vector<MaskedPath>* masks = nullptr;
};

// Reads the names in `dir` (without "." and "..", and without symlinks,
// which the walk never follows) with getdents64 itself, into one buffer per
// level: opendir's fdopendir would check and set the descriptor's flags again
// (two fcntl calls per directory, some 270 for a distribution's /etc).
Result<std::vector<std::string>> ListNames(int dir_fd, const std::string& dir) {
  constexpr size_t kBufferSize = 32 * 1024;
  std::unique_ptr<char[]> buffer(new char[kBufferSize]);
  std::vector<std::string> names;
  for (;;) {
    ssize_t got = ::getdents64(dir_fd, buffer.get(), kBufferSize);
    if (got < 0) {
      if (errno == EINTR) continue;
      return Error::FromErrno(ErrorKind::kPolicy, "cannot vet /etc for root-only files", dir, errno);
    }
    if (got == 0) return names;
    for (ssize_t offset = 0; offset < got;) {
      const auto* entry = reinterpret_cast<const struct dirent64*>(buffer.get() + offset);
      offset += entry->d_reclen;
      if (IsDotOrDotDot(entry->d_name) || entry->d_type == DT_LNK) continue;
      names.emplace_back(entry->d_name);
    }
  }
}

Result<void> MaskRootOnly(int dir_fd, const std::string& dir, int depth, RootOnlyWalk& walk);

// Stats each of `names` in `dir` live and masks what others may not read,
// descending into the rest of the directories. Sets `*subdirs` to the number
// of directories among them.
Result<void> MaskNames(int dir_fd, const std::string& dir, const std::vector<std::string>& names, int depth,
                       RootOnlyWalk& walk, nlink_t* subdirs) {
  *subdirs = 0;
  for (const std::string& name : names) {
    if (++walk.entries > kEtcWalkMaxEntries) {
      return Error(ErrorKind::kPolicy, "cannot vet /etc for root-only files: it holds more than " +
                                           std::to_string(kEtcWalkMaxEntries) + " entries");
    }
    std::string path = dir + "/" + name;
    struct stat st;
    if (::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      if (errno == ENOENT) continue;  // removed while we looked
      return Error::FromErrno(ErrorKind::kPolicy, "cannot vet /etc for root-only files", path, errno);
    }
    if (S_ISDIR(st.st_mode)) {
      ++*subdirs;
      if (HiddenFromOthers(st.st_mode)) {
        walk.masks->push_back({path, true});
        continue;
      }
      int child = ::openat(dir_fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (child < 0) return Error::FromErrno(ErrorKind::kPolicy, "cannot vet /etc for root-only files", path, errno);
      CORRAL_TRY(MaskRootOnly(child, path, depth + 1, walk));
    } else if (HiddenFromOthers(st.st_mode)) {
      walk.masks->push_back({path, false});
    }
  }
  return Ok();
}

// Adds every file and directory under `dir` that only its owner or group may
// read (no read bit, or no search bit for a directory, for others): what an
// unprivileged caller could never see. Does not descend into what it masks.
// With a cache (policy/listing_cache.h), a directory whose key is remembered
// is not read; its names are stat-ed all the same.
Result<void> MaskRootOnly(int dir_fd, const std::string& dir, int depth, RootOnlyWalk& walk) {
  UniqueFd owned(dir_fd);
  if (depth > kEtcWalkMaxDepth) {
    return Error(ErrorKind::kPolicy, "cannot vet /etc for root-only files: " + dir + " is nested too deeply");
  }
  nlink_t subdirs = 0;
  if (walk.cache == nullptr) {
    CORRAL_ASSIGN_OR_RETURN(std::vector<std::string> names, ListNames(owned.get(), dir));
    return MaskNames(owned.get(), dir, names, depth, walk, &subdirs);
  }
  struct stat st;
  if (::fstat(owned.get(), &st) != 0) {
    return Error::FromErrno(ErrorKind::kPolicy, "cannot vet /etc for root-only files", dir, errno);
  }
  const DirectoryKey key = KeyOf(st);
  if (const std::vector<std::string>* remembered = walk.cache->Find(ListingOf::kRootOnlyWalk, dir, key)) {
    const size_t masks = walk.masks->size();
    const int entries = walk.entries;
    CORRAL_TRY(MaskNames(owned.get(), dir, *remembered, depth, walk, &subdirs));
    // Where the link count counts subdirectories, it must agree.
    if (st.st_nlink < 2 || subdirs + 2 == st.st_nlink) return Ok();
    walk.masks->resize(masks);  // not the listing it has: list it live
    walk.entries = entries;
  }
  CORRAL_ASSIGN_OR_RETURN(std::vector<std::string> names, ListNames(owned.get(), dir));
  CORRAL_TRY(MaskNames(owned.get(), dir, names, depth, walk, &subdirs));
  // A change later in the same clock tick could leave this ctime as it is.
  if (st.st_ctim.tv_sec < walk.began.tv_sec - kListingSettle) {
    walk.cache->Remember(ListingOf::kRootOnlyWalk, dir, key, std::move(names));
  }
  return Ok();
}

}  // namespace

Result<std::vector<MaskedPath>> DiscoverRootOnly(const std::string& tree, ListingCache* cache,
                                                 const struct timespec& began) {
  std::vector<MaskedPath> masks;
  int fd = ::open(tree.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return masks;
    return Error::FromErrno(ErrorKind::kPolicy, "cannot vet /etc for root-only files", tree, errno);
  }
  RootOnlyWalk walk{cache, began, 0, &masks};
  CORRAL_TRY(MaskRootOnly(fd, tree, 0, walk));
  return masks;
}

Result<std::vector<MaskedPath>> DiscoverEtcSecrets(uid_t caller) {
  static constexpr std::array<std::string_view, 24> kSecrets = {
      "/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-", "/etc/sudoers",
      "/etc/sudoers.d", "/etc/ssl/private", "/etc/krb5.keytab", "/etc/security/opasswd",
      "/etc/NetworkManager/system-connections", "/etc/wireguard", "/etc/openvpn",
      "/etc/ppp/chap-secrets", "/etc/ppp/pap-secrets", "/etc/ipsec.secrets", "/etc/ipsec.d/private",
      "/etc/docker/key.json", "/etc/libvirt/secrets", "/etc/polkit-1/localauthority", "/etc/cups/ssl",
      "/etc/letsencrypt", "/etc/ssh/ssh_host_keys", "/etc/samba/private", "/etc/.pwd.lock",
  };
  std::vector<MaskedPath> masks;
  if (caller == 0) {
    // Inside the sandbox root has no capabilities, but it still owns the
    // root-owned files: every 0600 key and config under /etc would be
    // readable. So root sees /etc as an unprivileged user would.
    return DiscoverRootOnly("/etc", CurrentListingCache(), RealtimeNow());
  }
  for (std::string_view secret : kSecrets) {
    struct stat st;
    std::string path(secret);
    if (::lstat(path.c_str(), &st) != 0 || S_ISLNK(st.st_mode)) continue;
    // The sandbox runs with the caller's uid and no capabilities: a secret the
    // caller cannot read needs no mask.
    if (::faccessat(AT_FDCWD, path.c_str(), R_OK, AT_EACCESS) != 0) continue;
    masks.push_back({path, S_ISDIR(st.st_mode)});
  }
  // Private host keys sit beside public ones and the client config.
  if (DIR* dir = ::opendir("/etc/ssh"); dir != nullptr) {
    while (const struct dirent* entry = ::readdir(dir)) {
      std::string_view name = entry->d_name;
      if (name.starts_with("ssh_host_") && name.ends_with("_key")) {
        std::string path = "/etc/ssh/" + std::string(name);
        if (::faccessat(AT_FDCWD, path.c_str(), R_OK, AT_EACCESS) == 0) masks.push_back({path, false});
      }
    }
    ::closedir(dir);
  }
  return masks;
}

Result<std::vector<MaskedPath>> DiscoverProcSecrets(uid_t caller) {
  std::vector<MaskedPath> masks;
  if (caller != 0) return masks;
  // The sandbox's /proc is a fresh procfs of the same kernel, with the same
  // modes: root owns its 0400 files (slabinfo, timer_list, kpage*, ...)
  // just as it owns /etc's. Only the top level holds such files; the
  // per-process directories follow the processes' own owners.
  DIR* dir = ::opendir("/proc");
  if (dir == nullptr) {
    return Error::FromErrno(ErrorKind::kPolicy, "cannot vet /proc for root-only files", "/proc", errno);
  }
  while (const struct dirent* entry = ::readdir(dir)) {
    const char* name = entry->d_name;
    if (IsDotOrDotDot(name) || (name[0] >= '0' && name[0] <= '9') || entry->d_type == DT_LNK) continue;
    struct stat st;
    if (::fstatat(::dirfd(dir), name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (HiddenFromOthers(st.st_mode)) masks.push_back({"/proc/" + std::string(name), S_ISDIR(st.st_mode)});
  }
  ::closedir(dir);
  return masks;
}

}  // namespace corral
