#include "repair/fresh_repository.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>

#include "base/unique_fd.h"
#include "policy/git_config_check.h"
#include "policy/git_files.h"

namespace corral {
namespace {

// What each name at a repository's top level may be.
enum class Kind {
  kDataFile,   // a regular file, moved as it is
  kDataTree,   // a directory of directories and regular files, moved as it is
  kConfig,     // the config: checked, written anew
  kHooks,      // only *.sample regular files; not carried
  kInfo,       // only `exclude`, written anew
  kBranches,   // empty; made anew
};

const std::map<std::string, Kind>& TopLevel() {
  static const std::map<std::string, Kind> names = {
      {"HEAD", Kind::kDataFile},        {"description", Kind::kDataFile}, {"index", Kind::kDataFile},
      {"packed-refs", Kind::kDataFile}, {"COMMIT_EDITMSG", Kind::kDataFile}, {"ORIG_HEAD", Kind::kDataFile},
      {"FETCH_HEAD", Kind::kDataFile},  {"objects", Kind::kDataTree},     {"refs", Kind::kDataTree},
      {"logs", Kind::kDataTree},        {"config", Kind::kConfig},        {"hooks", Kind::kHooks},
      {"info", Kind::kInfo},            {"branches", Kind::kBranches},
  };
  return names;
}

constexpr int kMaxTreeDepth = 16;

UniqueFd OpenBeneath(int dir, const std::string& name, int flags) {
  struct open_how how = {};
  how.flags = static_cast<uint64_t>(flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  return UniqueFd(static_cast<int>(::syscall(SYS_openat2, dir, name.c_str(), &how, sizeof how)));
}

struct Entry {
  std::string name;
  mode_t mode = 0;
  FileIdentity id;
};

// The entries of the directory `dir` (lstat'ed), charging `budget`; false
// when it cannot be read or the budget is spent.
bool List(int dir, std::vector<Entry>* entries, size_t* budget) {
  UniqueFd copy = OpenBeneath(dir, ".", O_RDONLY | O_DIRECTORY);
  if (!copy) return false;
  DIR* stream = ::fdopendir(copy.get());
  if (stream == nullptr) return false;
  (void)copy.Release();  // the stream owns it now
  bool ok = true;
  while (struct dirent* entry = ::readdir(stream)) {
    std::string name = entry->d_name;
    if (name == "." || name == "..") continue;
    struct stat st;
    if (*budget == 0 || ::fstatat(::dirfd(stream), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      ok = false;
      break;
    }
    --*budget;
    entries->push_back({name, st.st_mode, {st.st_dev, st.st_ino}});
  }
  ::closedir(stream);
  return ok;
}

// Reads the regular file `name` in `dir`, at most kMaxGitFileBytes.
bool ReadRegular(int dir, const std::string& name, std::string* text) {
  UniqueFd fd = OpenBeneath(dir, name, O_RDONLY);
  struct stat st;
  if (!fd || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > static_cast<off_t>(kMaxGitFileBytes)) {
    return false;
  }
  text->clear();
  char buffer[8192];
  for (;;) {
    ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    if (n == 0) return true;
    text->append(buffer, static_cast<size_t>(n));
    if (text->size() > kMaxGitFileBytes) return false;
  }
}

// "" when the directory `dir` (at `path` below the repository) holds only
// directories and regular files, and no alternates.
std::string CheckTree(int dir, const std::string& path, int depth, size_t* budget) {
  if (depth > kMaxTreeDepth) return path + " is nested too deep to check";
  std::vector<Entry> entries;
  if (!List(dir, &entries, budget)) {
    return *budget == 0 ? "it holds more than " + std::to_string(kMaxFreshEntries) + " entries to check"
                        : path + " cannot be read";
  }
  for (const Entry& entry : entries) {
    std::string below = path + "/" + entry.name;
    if (path == "objects/info" && (entry.name == "alternates" || entry.name == "http-alternates")) {
      return below + " makes git read objects from elsewhere";
    }
    if (S_ISREG(entry.mode)) continue;
    if (!S_ISDIR(entry.mode)) return below + " is not a regular file or a directory";
    UniqueFd sub = OpenBeneath(dir, entry.name, O_RDONLY | O_DIRECTORY);
    if (!sub) return below + " cannot be opened";
    std::string why = CheckTree(sub.get(), below, depth + 1, budget);
    if (!why.empty()) return why;
  }
  return {};
}

std::string CheckHooks(int hooks, size_t* budget) {
  std::vector<Entry> entries;
  if (!List(hooks, &entries, budget)) return "hooks/ cannot be read";
  for (const Entry& entry : entries) {
    if (!S_ISREG(entry.mode) || !entry.name.ends_with(".sample")) {
      return "hooks/" + entry.name + " is a hook git could run (only git's *.sample files may be there)";
    }
  }
  return {};
}

bool WriteNew(int dir, const std::string& name, const std::string& text) {
  UniqueFd fd(::openat(dir, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666));
  if (!fd) return false;
  for (size_t done = 0; done < text.size();) {
    ssize_t n = ::write(fd.get(), text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

std::string Errno(const std::string& what) { return what + ": " + std::strerror(errno); }

}  // namespace

FreshRepository CheckFreshRepository(int gitdir) {
  FreshRepository fresh;
  size_t budget = kMaxFreshEntries;
  std::vector<Entry> entries;
  if (!List(gitdir, &entries, &budget)) {
    fresh.unsafe = "its top level cannot be read";
    return fresh;
  }
  int required = 0;
  for (const Entry& entry : entries) {
    auto kind = TopLevel().find(entry.name);
    if (kind == TopLevel().end()) {
      fresh.unsafe = entry.name + " is not something git init or a commit makes";
      return fresh;
    }
    const bool tree = kind->second == Kind::kDataTree || kind->second == Kind::kHooks ||
                      kind->second == Kind::kInfo || kind->second == Kind::kBranches;
    if (tree ? !S_ISDIR(entry.mode) : !S_ISREG(entry.mode)) {
      fresh.unsafe = entry.name + " is not a " + (tree ? "directory" : "regular file");
      return fresh;
    }
    if (entry.name == "HEAD" || entry.name == "objects" || entry.name == "refs") ++required;
    UniqueFd sub = tree ? OpenBeneath(gitdir, entry.name, O_RDONLY | O_DIRECTORY) : UniqueFd();
    if (tree && !sub) {
      fresh.unsafe = entry.name + " cannot be opened";
      return fresh;
    }
    switch (kind->second) {
      case Kind::kDataFile:
        fresh.carried.push_back({entry.name, entry.id});
        break;
      case Kind::kDataTree:
        fresh.unsafe = CheckTree(sub.get(), entry.name, 1, &budget);
        fresh.carried.push_back({entry.name, entry.id});
        break;
      case Kind::kConfig:
        if (!ReadRegular(gitdir, "config", &fresh.config)) {
          fresh.unsafe = "config cannot be read (or is larger than " + std::to_string(kMaxGitFileBytes) + " bytes)";
        } else {
          fresh.has_config = true;
          std::string why = UnsafeGitConfig(fresh.config);
          if (!why.empty()) fresh.unsafe = "config: " + why;
        }
        break;
      case Kind::kHooks:
        fresh.unsafe = CheckHooks(sub.get(), &budget);
        break;
      case Kind::kInfo: {
        std::vector<Entry> info;
        if (!List(sub.get(), &info, &budget)) {
          fresh.unsafe = "info/ cannot be read";
          break;
        }
        for (const Entry& file : info) {
          if (file.name != "exclude" || !S_ISREG(file.mode)) {
            fresh.unsafe = "info/" + file.name + " is not info/exclude";
          } else if (!ReadRegular(sub.get(), "exclude", &fresh.exclude)) {
            fresh.unsafe = "info/exclude cannot be read";
          } else {
            fresh.has_exclude = true;
          }
          if (!fresh.unsafe.empty()) break;
        }
        break;
      }
      case Kind::kBranches: {
        std::vector<Entry> branches;
        if (!List(sub.get(), &branches, &budget) || !branches.empty()) fresh.unsafe = "branches/ is not empty";
        break;
      }
    }
    if (!fresh.unsafe.empty()) return fresh;
  }
  if (required != 3) fresh.unsafe = "it is not a repository git made (HEAD, objects/ or refs/ is missing)";
  return fresh;
}

std::string RebuildFreshRepository(int gitdir, const FreshRepository& fresh, int dir, const std::string& name) {
  if (::mkdirat(dir, name.c_str(), 0777) != 0) return Errno("making " + name);
  UniqueFd built = OpenBeneath(dir, name, O_RDONLY | O_DIRECTORY);
  if (!built) return Errno("opening " + name);
  if (fresh.has_config && !WriteNew(built.get(), "config", fresh.config)) return Errno("writing its config");
  if (fresh.has_exclude) {
    if (::mkdirat(built.get(), "info", 0777) != 0) return Errno("making info/");
    UniqueFd info = OpenBeneath(built.get(), "info", O_RDONLY | O_DIRECTORY);
    if (!info || !WriteNew(info.get(), "exclude", fresh.exclude)) return Errno("writing info/exclude");
  }
  if (::mkdirat(built.get(), "branches", 0777) != 0) return Errno("making branches/");
  for (const FreshRepository::Carried& carried : fresh.carried) {
    const std::string& entry = carried.name;
    if (::renameat2(gitdir, entry.c_str(), built.get(), entry.c_str(), RENAME_NOREPLACE) != 0) {
      return Errno("moving " + entry);
    }
    // Only corral can reach the new directory: what landed there stays what
    // it is now. It must be the very entry the check saw.
    struct stat after;
    bool tree = TopLevel().at(entry) == Kind::kDataTree;
    if (::fstatat(built.get(), entry.c_str(), &after, AT_SYMLINK_NOFOLLOW) != 0 ||
        (tree ? !S_ISDIR(after.st_mode) : !S_ISREG(after.st_mode)) ||
        !(FileIdentity{after.st_dev, after.st_ino} == carried.id)) {
      return entry + " changed while it was checked";
    }
  }
  return {};
}

}  // namespace corral
