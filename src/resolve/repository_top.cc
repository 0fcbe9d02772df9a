#include "resolve/repository_top.h"

#include <sys/stat.h>

#include "base/mutant.h"

namespace corral {
namespace {

constexpr int kMaxLevels = 64;

std::string Parent(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == 0 || slash == std::string::npos ? "/" : path.substr(0, slash);
}

bool HoldsGit(const std::string& dir) {
  struct stat st;
  std::string git = (dir == "/" ? "" : dir) + "/.git";
  return ::lstat(git.c_str(), &st) == 0 && (S_ISDIR(st.st_mode) || S_ISREG(st.st_mode));
}

}  // namespace

std::optional<std::string> RepositoryTop(const HostContext& host, std::string* note) {
  note->clear();
  struct stat here;
  if (host.cwd.empty() || host.cwd == "/" || host.cwd == host.home || ::lstat(host.cwd.c_str(), &here) != 0 ||
      HoldsGit(host.cwd)) {
    return std::nullopt;
  }
  std::string dir = host.cwd;
  for (int level = 0; level < kMaxLevels && dir != "/"; ++level) {
    dir = Parent(dir);
    struct stat st;
    if (::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_dev != here.st_dev) return std::nullopt;
    if (!HoldsGit(dir)) {
      if (dir == host.home) return std::nullopt;
      continue;
    }
    std::string refused = "the working directory is inside the git repository " + dir + ", but ";
    if (dir == "/" || dir == host.home) {
      *note = refused + (dir == "/" ? "\"/\"" : "the home directory") +
              " is never the workspace; the working directory is (pass --workspace DIR to choose)";
      return std::nullopt;
    }
    if (st.st_uid != host.uid && !MutantActive(Mutant::kRepositoryTopOwner)) {
      *note = refused + "it is not yours (owner uid " + std::to_string(st.st_uid) +
              "); the working directory is the workspace (pass --workspace DIR to choose)";
      return std::nullopt;
    }
    Result<void> vetted = VetWorkspace(dir, host, WorkspaceSource::kDerived);
    if (!vetted) {
      *note = refused + "it would not be a project's workspace (" + vetted.error().message() +
              "); the working directory is the workspace";
      return std::nullopt;
    }
    return dir;
  }
  return std::nullopt;
}

}  // namespace corral
