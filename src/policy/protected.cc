#include "policy/protected.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <climits>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

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
    ".npmrc", ".yarnrc", ".yarnrc.yml", ".pnpmfile.cjs",
    // editors: task files, and exrc files vim and neovim run
    ".vscode", ".idea", ".zed", ".nvim.lua", ".nvimrc", ".exrc", ".vimrc", ".gvimrc",
    // dev containers and agent tools (hooks, MCP servers, commands)
    ".devcontainer", ".mcp.json", ".claude", ".cursor", ".gemini", ".codex", ".windsurf", ".continue",
    ".aider.conf.yml",
    // corral's own project config
    "corral.toml",
};

std::string Join(const std::string& dir, const std::string& name) {
  return dir == "/" ? "/" + name : dir + "/" + name;
}

std::string Realpath(const std::string& path) {
  char resolved[PATH_MAX];
  return ::realpath(path.c_str(), resolved) != nullptr ? std::string(resolved) : std::string();
}

// The resolved path when it exists, else the lexically normal one ("a/../b"
// is "b"), so a missing target is recorded where git would create it.
std::string ResolvedOrNormal(const std::string& path) {
  std::string resolved = Realpath(path);
  if (!resolved.empty()) return resolved;
  return CollapseSlashes(std::filesystem::path(path).lexically_normal().string());
}

// What corral needs from a git config file: `core.hooksPath` and the files
// `include.path` / `includeIf.<cond>.path` pull in (a small INI reader for
// git's syntax; values may be quoted).
struct GitConfigRefs {
  std::string hooks_path;
  std::vector<std::string> includes;
};

GitConfigRefs ReadGitConfigRefs(const std::string& config) {
  std::ifstream in(config);
  std::string line, section;
  GitConfigRefs refs;
  auto lower = [](std::string text) {
    for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return text;
  };
  auto trim = [](std::string text) {
    size_t first = text.find_first_not_of(" \t");
    size_t last = text.find_last_not_of(" \t\r");
    return first == std::string::npos ? std::string() : text.substr(first, last - first + 1);
  };
  while (std::getline(in, line)) {
    line = trim(line);
    if (line.empty() || line[0] == '#' || line[0] == ';') continue;
    if (line[0] == '[') {
      // "[core]", "[include]", "[includeIf \"gitdir:...\"]": the section name.
      size_t end = line.find_first_of(" \t]", 1);
      section = lower(line.substr(1, end == std::string::npos ? std::string::npos : end - 1));
      continue;
    }
    size_t eq = line.find('=');
    if (eq == std::string::npos) continue;
    std::string key = lower(trim(line.substr(0, eq)));
    std::string value = trim(line.substr(eq + 1));
    if (value.size() >= 2 && value.front() == '"' && value.back() == '"') value = value.substr(1, value.size() - 2);
    if (section == "core" && key == "hookspath") refs.hooks_path = value;
    if ((section == "include" || section == "includeif") && key == "path" && !value.empty()) {
      refs.includes.push_back(value);
    }
  }
  return refs;
}

std::string ReadFirstLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
  return line;
}

class Discovery {
 public:
  explicit Discovery(const std::vector<std::string>& roots) : roots_(roots) {}

  void Root(const std::string& root) {
    std::string dotgit = Join(root, ".git");
    struct stat st;
    if (::lstat(dotgit.c_str(), &st) != 0) {
      for (const std::string& name : kGitdirNames) AddMissing(Join(dotgit, name));
    } else if (S_ISDIR(st.st_mode)) {
      Gitdir(dotgit, root, 0);
    } else if (S_ISREG(st.st_mode)) {
      Add(dotgit);  // the pointer itself stays read-only
      std::string line = ReadFirstLine(dotgit);
      if (line.starts_with("gitdir:")) {
        std::string target = line.substr(7);
        target.erase(0, target.find_first_not_of(' '));
        if (!target.empty() && target.front() != '/') target = Join(root, target);
        std::string resolved = Realpath(target);
        if (!resolved.empty()) Gitdir(resolved, root, 0);
      }
    } else {
      Add(dotgit);  // a symlink: pinned as a symlink, its target followed
      std::string resolved = Realpath(dotgit);
      if (!resolved.empty()) Gitdir(resolved, root, 0);
    }
    for (const std::string& name : kRootNames) Add(Join(root, name));
  }

  ProtectedSet Finish() {
    ProtectedSet set;
    for (auto& [path, entry] : entries_) set.paths.push_back(entry);
    for (const ProtectedPath& entry : set.paths) {
      if (entry.state != State::kDirectory && entry.state != State::kFile) continue;
      // Every directory between the root and the entry is pinned in place.
      std::string dir = entry.path.substr(0, entry.path.rfind('/'));
      while (dir.size() > entry.root.size() && IsWithin(dir, entry.root)) {
        anchors_.insert(dir);
        dir = dir.substr(0, dir.rfind('/'));
      }
    }
    for (const std::string& anchor : anchors_) {
      struct stat st;
      if (::lstat(anchor.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) continue;
      set.anchors.push_back(PinnedPath{anchor, FileIdentity{st.st_dev, st.st_ino}, FileType::kDirectory});
    }
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

  // `worktree` is where a relative core.hooksPath is resolved from.
  void Gitdir(const std::string& gitdir, const std::string& worktree, int depth) {
    if (depth > 4) return;
    for (const char* config : {"config", "config.worktree"}) ConfigRefs(Join(gitdir, config), worktree, 0);
    if (RootOf(gitdir).empty()) return;
    for (const std::string& name : kGitdirNames) Add(Join(gitdir, name));
    // A hook may be a symlink into the tree (tools/pre-commit): its target runs too.
    std::error_code ec;
    std::filesystem::directory_iterator hooks(Join(gitdir, "hooks"), ec);
    for (; !ec && hooks != std::filesystem::directory_iterator(); hooks.increment(ec)) {
      if (!hooks->is_symlink(ec)) continue;
      std::string resolved = Realpath(hooks->path().string());
      if (!resolved.empty()) Add(resolved);
    }
    std::string common = ReadFirstLine(Join(gitdir, "commondir"));
    if (!common.empty()) {
      if (common.front() != '/') common = Join(gitdir, common);
      std::string resolved = Realpath(common);
      if (!resolved.empty() && resolved != gitdir) Gitdir(resolved, worktree, depth + 1);
    }
    for (const char* nested : {"modules", "worktrees"}) {
      std::filesystem::directory_iterator entries(Join(gitdir, nested), ec);
      for (; !ec && entries != std::filesystem::directory_iterator(); entries.increment(ec)) {
        if (entries->is_directory(ec) && !entries->is_symlink(ec)) Gitdir(entries->path().string(), worktree, depth + 1);
      }
      ec.clear();
    }
  }

  // The hooks directory a config names (husky and friends), and the files it
  // includes, which git reads as config.
  void ConfigRefs(const std::string& config, const std::string& worktree, int depth) {
    if (depth > 4) return;
    GitConfigRefs refs = ReadGitConfigRefs(config);
    if (!refs.hooks_path.empty() && refs.hooks_path.front() != '~') {
      std::string hooks = refs.hooks_path.front() == '/' ? refs.hooks_path : Join(worktree, refs.hooks_path);
      Add(ResolvedOrNormal(hooks));
    }
    std::string dir = config.substr(0, config.rfind('/'));
    for (std::string include : refs.includes) {
      if (include.front() == '~') continue;  // outside the workspace by convention; home is isolated
      if (include.front() != '/') include = Join(dir, include);
      std::string path = ResolvedOrNormal(include);
      Add(path);
      ConfigRefs(path, worktree, depth + 1);
    }
  }

  // Records the first component of `path` below its root that does not exist:
  // if the run creates it, the sweep moves it out whole (a created `.git` goes
  // with everything in it, not just its hooks).
  void AddMissing(const std::string& path) {
    std::string root = RootOf(path);
    if (root.empty()) return;
    std::string first = path;
    for (std::string dir = path.substr(0, path.rfind('/')); dir.size() > root.size(); dir = dir.substr(0, dir.rfind('/'))) {
      struct stat st;
      if (::lstat(dir.c_str(), &st) == 0) break;
      first = dir;
    }
    entries_.emplace(first, ProtectedPath{first, State::kMissing, {}, {}, root});
  }

  void Add(const std::string& path) {
    std::string root = RootOf(path);
    if (root.empty()) return;
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0) {
      AddMissing(path);
      return;
    }
    ProtectedPath entry{path, State::kFile, FileIdentity{st.st_dev, st.st_ino}, {}, root};
    if (S_ISDIR(st.st_mode)) entry.state = State::kDirectory;
    if (S_ISLNK(st.st_mode)) {
      entry.state = State::kSymlink;
      char target[PATH_MAX];
      ssize_t n = ::readlink(path.c_str(), target, sizeof target - 1);
      entry.link_target = n > 0 ? std::string(target, static_cast<size_t>(n)) : std::string();
      std::string resolved = Realpath(path);
      if (!resolved.empty() && resolved != path) Add(resolved);
    }
    entries_.insert_or_assign(path, entry);
  }

  const std::vector<std::string>& roots_;
  std::map<std::string, ProtectedPath> entries_;
  std::set<std::string> anchors_;
};

}  // namespace

const std::vector<std::string>& ProtectedNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> all;
    for (const std::string& name : kGitdirNames) all.push_back(".git/" + name);
    all.insert(all.end(), kRootNames.begin(), kRootNames.end());
    return all;
  }();
  return names;
}

ProtectedSet DiscoverProtected(const std::vector<std::string>& writable_roots) {
  Discovery discovery(writable_roots);
  for (const std::string& root : writable_roots) discovery.Root(root);
  return discovery.Finish();
}

}  // namespace corral
