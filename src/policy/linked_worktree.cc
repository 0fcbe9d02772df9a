#include "policy/linked_worktree.h"

#include <sys/stat.h>

#include "base/mutant.h"
#include "policy/git_files.h"
#include "policy/path.h"

namespace corral {
namespace {

// The canonical form of `path` (relative to `base` unless absolute); "" when
// it does not exist.
std::string Canonical(std::string path, const std::string& base) {
  if (path.empty()) return {};
  return ResolvedOrEmpty(path.front() == '/' ? path : base + "/" + path);
}

std::string Parent(const std::string& path) { return path.substr(0, path.rfind('/')); }
std::string Base(const std::string& path) { return path.substr(path.rfind('/') + 1); }

bool Is(const std::string& path, mode_t type) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0 && (st.st_mode & S_IFMT) == type;
}

// The first line of the git file at canonical `path` ("" when unusable).
std::string Line(const std::string& path) {
  GitFileText file = ReadGitFile(path);
  return file.found && file.problem.empty() ? FirstLine(file.text) : std::string();
}

std::string Trimmed(std::string text) {
  size_t begin = text.find_first_not_of(" \t");
  return begin == std::string::npos ? std::string() : text.substr(begin);
}

}  // namespace

std::optional<std::string> LinkedWorktreeRepository(const std::string& workspace, const HostContext& host,
                                                    std::string* note) {
  note->clear();
  const std::string dotgit = workspace + "/.git";
  if (!Is(dotgit, S_IFREG)) return std::nullopt;
  std::string line = Line(dotgit);
  if (!line.starts_with("gitdir:")) return std::nullopt;
  const std::string stated = Trimmed(line.substr(7));
  auto refuse = [&](const std::string& why) -> std::optional<std::string> {
    *note = dotgit + " makes the workspace a linked worktree of " + stated + ", but " + why +
            ": its repository is not granted (git inside will not find it; grant it with --allow-write)";
    return std::nullopt;
  };
  const std::string gitdir = Canonical(stated, workspace);
  if (gitdir.empty() || !Is(gitdir, S_IFDIR)) return refuse("that gitdir does not exist");
  if (Base(Parent(gitdir)) != "worktrees") return refuse("it is not a directory under a repository's worktrees/");
  const std::string common = Parent(Parent(gitdir));
  if (Canonical(Line(gitdir + "/commondir"), gitdir) != common) {
    return refuse("its commondir does not name " + common);
  }
  if (Canonical(Line(gitdir + "/gitdir"), gitdir) != dotgit && !MutantActive(Mutant::kWorktreeClaim)) {
    return refuse(gitdir + "/gitdir does not point back at " + dotgit + " (the repository does not claim it)");
  }
  struct stat st;
  if (::lstat(common.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != host.uid) {
    return refuse(common + " is not a directory of yours");
  }
  if (!Is(common + "/HEAD", S_IFREG) || !Is(common + "/objects", S_IFDIR) || !Is(common + "/refs", S_IFDIR)) {
    return refuse(common + " is not a repository (HEAD, objects/ or refs/ is missing)");
  }
  if (common == "/" || common == host.home || IsWithin(host.home, common) || IsWithin(workspace, common)) {
    return refuse(common + " would grant more than the repository");
  }
  return common;
}

}  // namespace corral
