#include "executor/scratch.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>

#include "base/hex.h"
#include "base/mutant.h"
#include "base/random.h"
#include "executor/errors.h"
#include "overlay/overlay_run.h"

namespace corral::executor {
namespace {

Error Unsafe(const std::string& message) { return ExecutorError(ExecutorErrc::kScratchUnsafe, message); }

Error Failed(const std::string& what, const char* syscall, int err) {
  return Reclassify(ExecutorErrc::kScratchUnsafe, Error::FromErrno(ErrorKind::kIo, what, syscall, err));
}

// mkdirat(dir, name, 0700), then opened without following a symlink, and
// checked to be a directory of ours that only we may enter.
Result<UniqueFd> MakePrivateDir(int dir, const std::string& name) {
  if (::mkdirat(dir, name.c_str(), 0700) != 0) return Failed("cannot create " + name, "mkdirat", errno);
  UniqueFd made(::openat(dir, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!made) return Failed("cannot open " + name, "openat", errno);
  struct stat st;
  if (::fstat(made.get(), &st) != 0) return Failed("cannot examine " + name, "fstat", errno);
  if (st.st_uid != ::geteuid() || (st.st_mode & 0077) != 0) {
    return Unsafe("the scratch directory " + name + " is not ours alone (uid " + std::to_string(st.st_uid) +
                  ", mode " + std::to_string(st.st_mode & 07777) + ")");
  }
  return made;
}

}  // namespace

Result<std::string> PathOfDescriptor(int fd) {
  char buffer[PATH_MAX];
  std::string link = "/proc/self/fd/" + std::to_string(fd);
  ssize_t n = ::readlink(link.c_str(), buffer, sizeof buffer - 1);
  if (n <= 0) return Failed("cannot read back a directory's path", "readlink", errno);
  return std::string(buffer, static_cast<size_t>(n));
}

Result<ScratchDir> ScratchDir::Create(const std::string& root) {
  ScratchDir scratch;
  const std::string where = root.empty() ? "/tmp" : root;
  if (where.empty() || where[0] != '/') return Unsafe("the scratch root must be an absolute path: " + root);
  scratch.parent_.Reset(::open(where.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!scratch.parent_) {
    int err = errno;
    if (err == ELOOP || err == ENOTDIR) {
      return Unsafe("the scratch root " + where + " is a symlink or not a directory; give the directory itself");
    }
    return Failed("cannot open the scratch root " + where, "open", err);
  }
  struct stat st;
  if (::fstat(scratch.parent_.get(), &st) != 0) return Failed("cannot examine " + where, "fstat", errno);
  // A root the caller named must be theirs: another user could swap what
  // is below it. The default, /tmp, is root's and sticky, and the set's
  // directory made in it is checked to be ours alone.
  if (!root.empty() && st.st_uid != ::geteuid() && !MutantActive(Mutant::kExecutorScratchOwner)) {
    return Unsafe("the scratch root " + root + " belongs to uid " + std::to_string(st.st_uid) + ", not to uid " +
                  std::to_string(::geteuid()));
  }
  CORRAL_ASSIGN_OR_RETURN(std::string random, RandomBytes(8));
  scratch.name_ = "corral-executors-" + HexEncode(random);
  CORRAL_ASSIGN_OR_RETURN(scratch.dir_, MakePrivateDir(scratch.parent_.get(), scratch.name_));
  CORRAL_ASSIGN_OR_RETURN(scratch.path_, PathOfDescriptor(scratch.dir_.get()));
  return scratch;
}

Result<ExecutorDirs> ScratchDir::MakeExecutorDirs(int index) const {
  const std::string name = std::to_string(index);
  CORRAL_ASSIGN_OR_RETURN(UniqueFd dir, MakePrivateDir(dir_.get(), name));
  CORRAL_ASSIGN_OR_RETURN(UniqueFd home, MakePrivateDir(dir.get(), "home"));
  CORRAL_ASSIGN_OR_RETURN(UniqueFd tmp, MakePrivateDir(dir.get(), "tmp"));
  ExecutorDirs dirs;
  CORRAL_ASSIGN_OR_RETURN(dirs.home, PathOfDescriptor(home.get()));
  CORRAL_ASSIGN_OR_RETURN(dirs.tmp, PathOfDescriptor(tmp.get()));
  return dirs;
}

Result<std::string> ScratchDir::WritePrivateFile(const std::string& name, const std::string& text) const {
  UniqueFd file(::openat(dir_.get(), name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!file) return Failed("cannot create " + name, "openat", errno);
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(file.get(), text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Failed("cannot write " + name, "write", errno);
    done += static_cast<size_t>(n);
  }
  return path_ + "/" + name;
}

Result<void> ScratchDir::RemoveExecutor(int index) const {
  if (removed_) return {};
  return RemoveTreeAt(dir_.get(), std::to_string(index));
}

Result<void> ScratchDir::Remove() {
  if (removed_) return {};
  CORRAL_TRY(RemoveTreeAt(parent_.get(), name_));
  removed_ = true;
  dir_.Reset();
  return {};
}

}  // namespace corral::executor
