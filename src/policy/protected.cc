#include "policy/protected.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <deque>
#include <map>
#include <set>
#include <string_view>

#include "base/absent_names.h"
#include "base/mutant.h"
#include "base/unique_fd.h"
#include "policy/birth_time.h"
#include "policy/git_files.h"
#include "policy/resolve_in_roots.h"

namespace corral {
namespace {

using State = ProtectedPath::State;

// Inside a gitdir: what git runs or reads for commands. `commondir`
// redirects git to another gitdir's config and hooks. The gitdirs under
// `modules/` (submodules) and `worktrees/` (linked worktrees) are protected
// the same way, one by one.
const std::vector<std::string> kGitdirNames = {"hooks", "config", "config.worktree", "commondir"};

// Directly under a writable root: files that editors, shells, direnv, hook
// managers, package managers, dev containers and agent tools run or read as
// configuration that runs code.
const std::vector<std::string> kRootNames = {
    // git and shells
    ".gitmodules", ".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile", ".zshrc", ".zshenv",
    ".zprofile", ".zlogin", ".zlogout", ".cshrc", ".tcshrc", ".kshrc",
    // environment managers
    ".envrc", "mise.toml", ".mise.toml",
    // hook managers: husky v9 points core.hooksPath at .husky/_, whose stubs
    // run .husky/<hook>; pre-commit and lefthook read their config at commit
    ".husky", ".pre-commit-config.yaml", "lefthook.yml", ".lefthook.yml", "lefthook.yaml", ".lefthook.yaml",
    "lefthook.toml", ".lefthook.toml", "lefthook.json", ".lefthook.json", "lefthook-local.yml",
    ".lefthook-local.yml", "lefthook-local.yaml", ".lefthook-local.yaml", "lefthook-local.toml",
    ".lefthook-local.toml", "lefthook-local.json", ".lefthook-local.json",
    // package managers: yarnPath, node-options and script-shell, pnpm hooks
    // (.yarn/releases and .yarn/plugins: see Yarn below)
    ".npmrc", ".yarnrc", ".yarnrc.yml", ".pnpmfile.cjs",
    // tool versions: asdf and mise run a `path:` version's binaries
    ".tool-versions",
    // editors: task files, and exrc files vim and neovim run
    ".vscode", ".idea", ".zed", ".nvim.lua", ".nvimrc", ".exrc", ".vimrc", ".gvimrc",
    // dev containers (initializeCommand runs on the host) and agent tools
    // (hooks, MCP servers, commands)
    ".devcontainer", ".devcontainer.json", ".mcp.json", ".claude", ".cursor", ".gemini", ".codex", ".windsurf", ".continue",
    ".aider.conf.yml",
    // a root that is a home directory: config of tools run anywhere that
    // names commands (git's core.fsmonitor and aliases, Mercurial's hooks,
    // ripgrep's --pre, the AWS CLI's credential_process)
    ".gitconfig", ".hgrc", ".ripgreprc", ".aws/config",
    // corral's own project config
    "corral.toml",
};

// Inside a Mercurial repository's .hg: its config (hooks, extensions), the
// share extension's per-repository config, and `sharedpath`, which makes hg
// load another repository's config.
const std::vector<std::string> kHgNames = {"hgrc", "hgrc-not-shared", "sharedpath"};

// Directories discovery never descends into while it looks below the top:
// repositories (their own rules apply), and dependency, build and cache
// trees that tools regenerate, nobody commits in, and that would eat the
// walk's budget (a large directory is the walk's main cost).
const std::vector<std::string> kUnwalkedNames = {
    ".git", ".hg", ".corral-quarantine", "node_modules", "target", ".venv", "venv",
    "__pycache__", ".tox", ".nox", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".gradle", ".cache",
};

// The hooks git runs (githooks(5)). A hooks directory that is a writable
// root itself (`core.hooksPath = .`) cannot be bound read-only without
// freezing the whole root: these names in it are protected instead.
const std::vector<std::string> kGitHookNames = {
    "applypatch-msg", "pre-applypatch", "post-applypatch", "pre-commit", "pre-merge-commit",
    "prepare-commit-msg", "commit-msg", "post-commit", "pre-rebase", "post-checkout", "post-merge",
    "pre-push", "pre-receive", "update", "proc-receive", "post-receive", "post-update",
    "reference-transaction", "push-to-checkout", "pre-auto-gc", "post-rewrite", "sendemail-validate",
    "fsmonitor-watchman", "p4-changelist", "p4-prepare-changelist", "p4-post-changelist", "p4-pre-submit",
    "post-index-change",
};

// What a tree can make discovery do is bounded: a run can plant any number
// of gitdirs under .git/modules and .git/worktrees, chains of includes, and
// any number of directories below the top.
constexpr int kMaxDepth = 4;                // gitdir and include nesting
constexpr size_t kMaxNestedGitdirs = 64;    // under modules/ and worktrees/, in all
constexpr size_t kMaxGitFiles = 64;         // existing git files read, in all
constexpr size_t kMaxDirectoryEntries = 1024;  // names read from one directory

// Below the top of a root. Directories to depth kWalkDepth (a root's child is
// at depth 1) are looked in, at most kMaxWalkedDirectories per root, in
// breadth-first order: the protected names that exist in them are protected,
// and so are the repositories in them. Those to depth kMissingDepth also get
// a missing `.git` and `.hg` recorded, so the sweep takes out a repository
// the run creates there; at most kMaxNestedMissing per root, as each one
// costs every run's sweep a look. At most kMaxNestedEntries paths in all
// come from below the top (each existing one is a mount).
constexpr int kWalkDepth = 3;
constexpr int kMissingDepth = 2;
constexpr size_t kMaxWalkedDirectories = 256;
constexpr size_t kMaxWalkedEntries = 8192;  // names read by the walk, per root
constexpr size_t kMaxNestedMissing = 64;
constexpr size_t kMaxNestedEntries = 256;

std::string Join(const std::string& dir, const std::string& name) {
  return dir == "/" ? "/" + name : dir + "/" + name;
}

std::string Parent(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string Trim(const std::string& text) {
  size_t first = text.find_first_not_of(" \t");
  return first == std::string::npos ? std::string() : text.substr(first);
}

bool Contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

bool IsRootName(std::string_view name) {
  static const std::set<std::string, std::less<>> names(kRootNames.begin(), kRootNames.end());
  return names.find(name) != names.end();
}

struct DirectoryEntry {
  std::string name;
  bool directory = false;  // a real directory, never a symlink to one
};

// Which entries of a directory are kept: all, or what the walk below the
// top needs (directories and protected names; most entries are neither).
enum class Keep { kAll, kWalked };

// A directory below (or at) a root, reached from the root's descriptor: the
// walk lists the root discovery began with, whatever another run renames.
struct Below {
  int root_fd = -1;  // -1: `dir` is opened by its path
  std::string relative;  // "." for the root itself
};

// The entries of a canonical directory that `keep` says, sorted by name; at
// most kMaxDirectoryEntries are read. `read` counts them.
std::vector<DirectoryEntry> DirectoryEntries(const std::string& dir, bool* truncated, Keep keep = Keep::kAll,
                                             size_t* read = nullptr, const Below& below = {}) {
  std::vector<DirectoryEntry> entries;
  struct open_how how = {};
  how.flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC;
  how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  if (below.root_fd >= 0) how.resolve |= RESOLVE_BENEATH;
  int fd = below.root_fd >= 0
               ? static_cast<int>(::syscall(SYS_openat2, below.root_fd, below.relative.c_str(), &how, sizeof how))
               : static_cast<int>(::syscall(SYS_openat2, AT_FDCWD, dir.c_str(), &how, sizeof how));
  if (fd < 0) return entries;
  DIR* stream = ::fdopendir(fd);  // owns fd from here on
  if (stream == nullptr) {
    UniqueFd owner(fd);
    return entries;
  }
  size_t count = 0;
  while (struct dirent* entry = ::readdir(stream)) {
    std::string_view name = entry->d_name;
    if (name == "." || name == "..") continue;
    if (count == kMaxDirectoryEntries) {
      *truncated = true;
      break;
    }
    ++count;
    bool directory = entry->d_type == DT_DIR;
    if (entry->d_type == DT_UNKNOWN) {
      struct stat st;
      directory = ::fstatat(fd, entry->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
    }
    if (keep == Keep::kWalked && !directory && !IsRootName(name)) continue;
    entries.push_back({std::string(name), directory});
  }
  if (read != nullptr) *read += count;
  ::closedir(stream);
  std::sort(entries.begin(), entries.end(),
            [](const DirectoryEntry& a, const DirectoryEntry& b) { return a.name < b.name; });
  return entries;
}

// Whether a symlink met as a protected entry is followed to its target, and
// how far a pointer's text is trusted (ResolveInRoots).
enum class Follow {
  kUser,     // the entry existed before the run and is read-only to it: the user's
  kSandbox,  // the entry existed before the run, but an earlier run may have made
             // it (a repository below the top): followed only inside the roots
  kNone,     // the entry may be the command's (a gitdir under modules/ or worktrees/)
};

Trust TrustOf(Follow follow) { return follow == Follow::kUser ? Trust::kUser : Trust::kSandbox; }

// What an entry is for: a hooks directory gets the care kGitHookNames says.
enum class Role { kFile, kHooks };

// Whether a repository that does not exist in a directory is recorded as
// missing, for the sweep to take out if the run creates it.
enum class Missing { kRecord, kIgnore };

class Discovery {
 public:
  explicit Discovery(const std::vector<std::string>& roots) : roots_(roots) {}

  void Root(const std::string& root) {
    // A writable file (--allow-write FILE) holds no protected names.
    struct stat root_st;
    if (::stat(root.c_str(), &root_st) != 0 || !S_ISDIR(root_st.st_mode)) return;
    struct open_how how = {};
    how.flags = O_PATH | O_DIRECTORY | O_CLOEXEC;
    how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
    UniqueFd fd(static_cast<int>(::syscall(SYS_openat2, AT_FDCWD, root.c_str(), &how, sizeof how)));
    if (!fd || ::fstat(fd.get(), &root_st) != 0) {
      moved_roots_.insert(root);
      return;
    }
    root_ids_[root] = FileIdentity{root_st.st_dev, root_st.st_ino};
    // Most of the names looked for at the top are absent: one listing of
    // the root (through its descriptor) settles those without a lookup each.
    top_listings_[root] = AbsentNames::Read(fd.get());
    root_fds_[root] = std::move(fd);
    Repositories(root, Missing::kRecord, Follow::kUser);
    for (const std::string& name : kRootNames) Add(Join(root, name), Follow::kUser);
    Yarn(root);
    if (!MutantActive(Mutant::kNestedProtect)) Walk(root);
    CheckRoot(root);
  }

  // Discovery reads by path: when another run swaps the root for another
  // directory meanwhile, what it found belongs to that one. Checked after
  // every listing and at the end; the policy refuses a root that moved.
  void CheckRoot(const std::string& root) {
    struct stat st;
    auto id = root_ids_.find(root);
    if (id == root_ids_.end()) return;
    if (::stat(root.c_str(), &st) != 0 || st.st_dev != id->second.dev || st.st_ino != id->second.ino) {
      moved_roots_.insert(root);
    }
  }

  ProtectedSet Finish() {
    ProtectedSet set;
    for (const auto& [root, id] : root_ids_) set.roots.push_back(PinnedPath{root, id, FileType::kDirectory});
    set.moved_roots.assign(moved_roots_.begin(), moved_roots_.end());
    for (auto& [path, entry] : entries_) set.paths.push_back(entry);
    for (const ProtectedPath& entry : set.paths) {
      if (entry.state != State::kDirectory && entry.state != State::kFile) continue;
      // Every directory between the root and the entry is pinned in place.
      std::string dir = Parent(entry.path);
      while (dir.size() > entry.root.size() && IsWithin(dir, entry.root)) {
        anchors_.insert(dir);
        dir = Parent(dir);
      }
    }
    for (const std::string& anchor : anchors_) {
      struct stat st;
      if (::lstat(anchor.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) continue;
      set.anchors.push_back(PinnedPath{anchor, FileIdentity{st.st_dev, st.st_ino}, FileType::kDirectory});
    }
    set.notes.assign(notes_.begin(), notes_.end());
    return set;
  }

 private:
  std::string RootOf(const std::string& path) const {
    std::string best;
    for (const std::string& root : roots_) {
      if (IsWithin(path, root) && root.size() > best.size()) best = root;
    }
    return best;
  }
  // A writable root itself, or a directory that holds one.
  bool HoldsARoot(const std::string& path) const {
    return std::any_of(roots_.begin(), roots_.end(), [&](const std::string& root) { return IsWithin(root, path); });
  }

  void Note(std::string text) { notes_.insert(std::move(text)); }
  void TooManyEntries(const std::string& dir) {
    Note(dir + ": more than " + std::to_string(kMaxDirectoryEntries) + " entries; not all were examined");
  }

  // lstat(2) of `path`; a name directly under a root that the root's
  // listing proves absent fails with ENOENT without a lookup.
  int Lstat(const std::string& path, struct stat* st) const {
    size_t slash = path.rfind('/');
    auto listing = top_listings_.find(Parent(path));
    if (slash != std::string::npos && listing != top_listings_.end() &&
        listing->second.CertainlyAbsent(std::string_view(path).substr(slash + 1))) {
      errno = ENOENT;
      return -1;
    }
    return ::lstat(path.c_str(), st);
  }

  // The repositories `dir` holds: git's `.git` (a directory, a `gitdir:`
  // file or a symlink) and Mercurial's `.hg`.
  void Repositories(const std::string& dir, Missing missing, Follow follow) {
    std::string dotgit = Join(dir, ".git");
    struct stat st;
    if (Lstat(dotgit, &st) != 0) {
      if (missing == Missing::kRecord) AddMissing(dotgit);
    } else if (S_ISDIR(st.st_mode)) {
      Gitdir(dotgit, dir, 0, follow);
    } else if (S_ISREG(st.st_mode)) {
      Add(dotgit, follow);  // the pointer itself stays read-only
      // Its gitdir may lie outside the roots (a linked worktree), where only
      // its config is read; a repository below the top is followed only
      // inside the roots.
      std::string line = FirstLine(ReadText(dotgit));
      if (line.starts_with("gitdir:")) {
        std::string target = Trim(line.substr(7));
        if (!target.empty() && target.front() != '/') target = Join(dir, target);
        if (!target.empty()) FollowGitdir(ResolveInRoots(target, roots_, TrustOf(follow)), dir, 0, follow);
      }
    } else if (S_ISLNK(st.st_mode)) {
      Add(dotgit, follow);  // pinned as a symlink, its target followed
      FollowGitdir(ResolveLink(dotgit, roots_, TrustOf(follow)), dir, 0, follow);
    }
    std::string dothg = Join(dir, ".hg");
    if (Lstat(dothg, &st) != 0) {
      if (missing == Missing::kRecord) AddMissing(dothg);
    } else if (S_ISDIR(st.st_mode)) {
      Hg(dothg, follow);
    } else {
      Add(dothg, follow);  // hg takes a symlink for the repository it leads to
    }
  }

  // A Mercurial repository: hgrc read-only, and the repository a share's
  // `sharedpath` names (whose hgrc hg loads too).
  void Hg(const std::string& dothg, Follow follow) {
    for (const std::string& name : kHgNames) Add(Join(dothg, name), follow);
    std::string shared = FirstLine(ReadText(Join(dothg, "sharedpath")));
    if (shared.empty()) return;
    if (shared.front() != '/') shared = Join(dothg, shared);
    Resolved source = ResolveInRoots(shared, roots_, TrustOf(follow));
    if (!source.inside || !visited_.insert(source.path).second) return;
    for (const std::string& name : kHgNames) {
      if (name != "sharedpath") Add(Join(source.path, name), Follow::kNone);
    }
  }

  // yarn runs the file yarnPath names (in .yarn/releases by convention) and
  // loads the plugins in .yarn/plugins. With no .yarn, a missing one is
  // recorded only when a .yarnrc.yml could name it: otherwise a .yarn the
  // run creates (its cache) is the run's output.
  void Yarn(const std::string& root) {
    struct stat st;
    bool has_yarn_dir = Lstat(Join(root, ".yarn"), &st) == 0;
    if (!has_yarn_dir && Lstat(Join(root, ".yarnrc.yml"), &st) != 0) return;
    for (const char* name : {".yarn/releases", ".yarn/plugins"}) Add(Join(root, name), Follow::kUser);
  }

  // The directories below the top of `root`, breadth first, within the
  // bounds above. Symlinks are never followed, the names in kUnwalkedNames
  // and the protected directories are not descended into, nor is another
  // writable root (it is walked on its own).
  void Walk(const std::string& root) {
    std::deque<std::pair<std::string, int>> queue = {{root, 0}};
    size_t walked = 0, names = 0, before = entries_.size(), missing_before = missing_added_;
    bool missing_capped = false;
    while (!queue.empty()) {
      auto [dir, depth] = queue.front();
      queue.pop_front();
      if (walked == kMaxWalkedDirectories) {
        Note(root + ": more than " + std::to_string(kMaxWalkedDirectories) + " directories within depth " +
             std::to_string(kWalkDepth) + "; " + dir + " and the ones after it were not looked in");
        return;
      }
      if (names >= kMaxWalkedEntries) {
        Note(root + ": more than " + std::to_string(kMaxWalkedEntries) + " names within depth " +
             std::to_string(kWalkDepth) + "; " + dir + " and the directories after it were not looked in");
        return;
      }
      if (entries_.size() - before >= kMaxNestedEntries) {
        Note(root + ": more than " + std::to_string(kMaxNestedEntries) + " protected paths below the top; " + dir +
             " and the directories after it were not looked in");
        return;
      }
      ++walked;
      bool truncated = false;
      Below below{root_fds_[root].get(), dir == root ? std::string(".") : dir.substr(root.size() + 1)};
      std::vector<DirectoryEntry> entries = DirectoryEntries(dir, &truncated, Keep::kWalked, &names, below);
      CheckRoot(root);
      if (truncated) TooManyEntries(dir);
      if (depth > 0) {
        Missing record = Missing::kIgnore;
        if (depth <= kMissingDepth && missing_added_ - missing_before < kMaxNestedMissing) {
          record = Missing::kRecord;
        } else if (depth <= kMissingDepth && !missing_capped) {
          missing_capped = true;
          Note(root + ": more than " + std::to_string(kMaxNestedMissing) + " missing paths below the top; a " +
               "repository the run creates in " + dir + " or a directory after it is not taken out");
        }
        walking_ = dir;
        Repositories(dir, record, Follow::kSandbox);
        for (const DirectoryEntry& entry : entries) {
          if (IsRootName(entry.name)) Add(Join(dir, entry.name), Follow::kSandbox);
        }
        walking_.clear();
      }
      if (depth == kWalkDepth) continue;
      for (const DirectoryEntry& entry : entries) {
        std::string child = Join(dir, entry.name);
        if (!entry.directory || Contains(kUnwalkedNames, entry.name) || IsRootName(entry.name) ||
            Contains(roots_, child)) {
          continue;
        }
        queue.emplace_back(child, depth + 1);
      }
    }
  }

  // A git file's text; empty when it is missing or unusable (said in a note).
  std::string ReadText(const std::string& path) {
    if (path.empty()) return {};
    if (files_read_ == kMaxGitFiles) {
      if (!files_capped_) {
        Note("more than " + std::to_string(kMaxGitFiles) + " git files to read; " + path +
             " and the files after it were not read, so what they point at is not protected");
      }
      files_capped_ = true;
      return {};
    }
    GitFileText file = ReadGitFile(path);
    if (file.found || !file.problem.empty()) ++files_read_;  // a missing file costs nothing
    if (!file.problem.empty()) Note(path + ": not read (" + file.problem + "); what it points at is not protected");
    return file.text;
  }

  // `path` itself, or where it leads when it is a symlink (an entry of a
  // gitdir the run cannot change). Empty when that is nowhere.
  std::string Readable(const std::string& path, Follow follow) {
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return path;
    Resolved target = ResolveLink(path, roots_, TrustOf(follow));
    return target.exists ? target.path : std::string();
  }

  void FollowGitdir(const Resolved& gitdir, const std::string& worktree, int depth, Follow follow) {
    if (gitdir.path.empty()) return;
    if (gitdir.exists) {
      Gitdir(gitdir.path, worktree, depth, follow);
    } else if (gitdir.inside) {
      // A pointer to a gitdir that does not exist yet: the run could create
      // it, hooks and all, for git to use. Swept like a missing .git.
      for (const std::string& name : kGitdirNames) AddMissing(Join(gitdir.path, name));
    }
  }

  // A gitdir the pointers lead to. `worktree` is where a relative
  // core.hooksPath is resolved from.
  void Gitdir(const std::string& gitdir, const std::string& worktree, int depth, Follow follow) {
    if (depth > kMaxDepth || !visited_.insert(gitdir).second) return;
    for (const char* config : {"config", "config.worktree"}) {
      ConfigRefs(Readable(Join(gitdir, config), follow), worktree, 0, follow);
    }
    bool inside = !RootOf(gitdir).empty();
    if (inside) {
      for (const std::string& name : kGitdirNames) {
        Add(Join(gitdir, name), follow, name == "hooks" ? Role::kHooks : Role::kFile);
      }
    }
    std::string common = FirstLine(ReadText(Readable(Join(gitdir, "commondir"), follow)));
    if (!common.empty()) {
      if (common.front() != '/') common = Join(gitdir, common);
      FollowGitdir(ResolveInRoots(common, roots_, TrustOf(follow)), worktree, depth + 1, follow);
    }
    if (inside) {
      for (const char* nested : {"modules", "worktrees"}) NestedGitdirs(Join(gitdir, nested), depth + 1);
    }
  }

  // Submodule and worktree gitdirs. A run can create these (nothing protects
  // modules/ or worktrees/ themselves, or git could not add a submodule), so
  // nothing in them is trusted: their own entries are protected where they
  // are, and no pointer in them (a symlink, a config, commondir) is followed
  // or even read.
  void NestedGitdirs(const std::string& dir, int depth) {
    if (depth > kMaxDepth) return;
    bool truncated = false;
    for (const DirectoryEntry& entry : DirectoryEntries(dir, &truncated)) {
      std::string gitdir = Join(dir, entry.name);
      if (!entry.directory) continue;
      if (nested_ == kMaxNestedGitdirs) {
        if (!nested_capped_) {
          Note("more than " + std::to_string(kMaxNestedGitdirs) + " gitdirs under modules/ and worktrees/; " +
               gitdir + " and the ones after it are not protected");
        }
        nested_capped_ = true;
        return;
      }
      if (!visited_.insert(gitdir).second) continue;
      ++nested_;
      for (const std::string& name : kGitdirNames) Add(Join(gitdir, name), Follow::kNone);
      for (const char* nested : {"modules", "worktrees"}) NestedGitdirs(Join(gitdir, nested), depth + 1);
    }
    if (truncated) TooManyEntries(dir);
  }

  // The hooks directory a config names (husky and friends), and the files it
  // includes, which git reads as config.
  void ConfigRefs(const std::string& config, const std::string& worktree, int depth, Follow follow) {
    if (config.empty() || depth > kMaxDepth || MutantActive(Mutant::kGitPointers)) return;
    GitConfigRefs refs = ParseGitConfigRefs(ReadText(config));
    if (!refs.hooks_path.empty() && refs.hooks_path.front() != '~') {
      std::string hooks = refs.hooks_path.front() == '/' ? refs.hooks_path : Join(worktree, refs.hooks_path);
      Resolved resolved = ResolveInRoots(hooks, roots_, TrustOf(follow));
      if (resolved.inside) Add(resolved.path, follow, Role::kHooks);
    }
    std::string dir = Parent(config);
    for (std::string include : refs.includes) {
      if (include.front() == '~') continue;  // outside the workspace by convention; home is isolated
      if (include.front() != '/') include = Join(dir, include);
      Resolved resolved = ResolveInRoots(include, roots_, TrustOf(follow));
      if (resolved.inside) Add(resolved.path, Follow::kNone);
      if (resolved.exists) ConfigRefs(resolved.path, worktree, depth + 1, follow);
    }
  }

  // Records the first component of `path` below its root that does not exist:
  // if the run creates it, the sweep moves it out whole (a created `.git` goes
  // with everything in it, not just its hooks).
  void AddMissing(const std::string& path) {
    std::string root = RootOf(path);
    if (root.empty()) return;
    // Below the top, the directory the walk is in is the floor: when it has
    // gone (another run renamed it meanwhile), nothing is recorded, since
    // recording the directory itself would take the user's directory out
    // of the tree when it comes back.
    const bool floored = !walking_.empty() && IsWithin(path, walking_) && !MutantActive(Mutant::kDiscoveryMoved);
    std::string floor = floored ? walking_ : root;
    if (floor != root) {
      struct stat st;
      if (::lstat(floor.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
        // What discovery read below it is not to be trusted: the policy
        // refuses the run rather than protect less than it shows.
        moved_roots_.insert(floor);
        return;
      }
    }
    std::string first = path;
    for (std::string dir = Parent(path); dir.size() > floor.size(); dir = Parent(dir)) {
      struct stat st;
      if (Lstat(dir, &st) == 0) break;
      first = dir;
    }
    if (entries_.emplace(first, ProtectedPath{first, State::kMissing, {}, {}, root}).second) ++missing_added_;
  }

  // `path` is canonical but for its last component, which may be a symlink.
  void Add(const std::string& path, Follow follow, Role role = Role::kFile) {
    std::string root = RootOf(path);
    if (root.empty()) return;
    if (HoldsARoot(path)) {
      if (role == Role::kHooks) {
        for (const std::string& hook : kGitHookNames) Add(Join(path, hook), follow);
      } else {
        Note(path + ": not protected: it is a writable root, and binding it read-only would freeze the whole root");
      }
      return;
    }
    struct stat st;
    if (Lstat(path, &st) != 0) {
      AddMissing(path);
      return;
    }
    ProtectedPath entry{path, State::kFile, FileIdentity{st.st_dev, st.st_ino}, {}, root};
    entry.born = BirthTimeAt(AT_FDCWD, path.c_str());  // the sweep tells a new object at this path from it
    if (S_ISDIR(st.st_mode)) entry.state = State::kDirectory;
    if (S_ISLNK(st.st_mode)) {
      entry.state = State::kSymlink;
      char target[PATH_MAX];
      ssize_t n = ::readlink(path.c_str(), target, sizeof target - 1);
      entry.link_target = n > 0 ? std::string(target, static_cast<size_t>(n)) : std::string();
    }
    entries_.insert_or_assign(path, entry);
    if (follow == Follow::kNone) return;
    if (entry.state == State::kSymlink) {
      // Its target is protected too, even when it does not exist yet.
      Resolved target = ResolveLink(path, roots_, TrustOf(follow));
      if (target.inside && target.path != path) Add(target.path, follow, role);
    } else if (entry.state == State::kDirectory && role == Role::kHooks) {
      HookLinks(path, follow);
    }
  }

  // A hook may be a symlink into the tree (tools/pre-commit): its target
  // runs too, and is protected whether or not it exists.
  void HookLinks(const std::string& hooks, Follow follow) {
    bool truncated = false;
    for (const DirectoryEntry& entry : DirectoryEntries(hooks, &truncated)) {
      std::string hook = Join(hooks, entry.name);
      struct stat st;
      if (::lstat(hook.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) continue;
      Resolved target = ResolveLink(hook, roots_, TrustOf(follow));
      if (target.inside) Add(target.path, Follow::kNone);
    }
    if (truncated) TooManyEntries(hooks);
  }

  const std::vector<std::string>& roots_;
  std::map<std::string, ProtectedPath> entries_;
  std::set<std::string> anchors_;
  std::set<std::string> visited_;
  std::set<std::string> notes_;
  size_t files_read_ = 0;
  size_t nested_ = 0;
  size_t missing_added_ = 0;
  std::map<std::string, FileIdentity> root_ids_;  // each root as discovery began with it
  std::map<std::string, UniqueFd> root_fds_;      // and its directory, which the walk lists
  std::map<std::string, AbsentNames> top_listings_;  // and what that directory held then
  std::set<std::string> moved_roots_;
  std::string walking_;  // the directory below the top that the walk is in
  bool files_capped_ = false;
  bool nested_capped_ = false;
};

}  // namespace

const std::vector<std::string>& ProtectedNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> all;
    for (const std::string& name : kGitdirNames) all.push_back(".git/" + name);
    for (const std::string& name : kHgNames) all.push_back(".hg/" + name);
    all.insert(all.end(), kRootNames.begin(), kRootNames.end());
    all.insert(all.end(), {".yarn/releases", ".yarn/plugins"});
    return all;
  }();
  return names;
}

bool IsProtectedRelative(std::string_view relative) {
  std::vector<std::string> parts;
  for (size_t at = 0; at <= relative.size();) {
    size_t slash = relative.find('/', at);
    if (slash == std::string_view::npos) slash = relative.size();
    if (slash > at) parts.emplace_back(relative.substr(at, slash - at));
    at = slash + 1;
  }
  bool in_git = false, in_hg = false;
  for (size_t i = 0; i < parts.size(); ++i) {
    const std::string& part = parts[i];
    if (part == ".git" || part == ".hg") {
      if (i + 1 == parts.size()) return true;
      (part == ".git" ? in_git : in_hg) = true;
      continue;
    }
    if (in_git && Contains(kGitdirNames, part)) return true;
    if (in_hg && Contains(kHgNames, part)) return true;
    if (IsRootName(part)) return true;
    if (i + 1 < parts.size()) {
      std::string pair = part + "/" + parts[i + 1];
      if (IsRootName(pair) || pair == ".yarn/releases" || pair == ".yarn/plugins") return true;
    }
  }
  return false;
}

ProtectedSet DiscoverProtected(const std::vector<std::string>& writable_roots) {
  Discovery discovery(writable_roots);
  for (const std::string& root : writable_roots) discovery.Root(root);
  return discovery.Finish();
}

}  // namespace corral
