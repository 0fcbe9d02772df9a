#include "exec/stdio_modes.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include <algorithm>

#include "base/mutant.h"

namespace corral {
namespace {

constexpr mode_t kModeBits = 07777;

// A file a chmod through a descriptor changes for others: not a pipe (its
// inode is the pipe's own) or a socket.
bool OnAFilesystem(int fd, const struct stat& st) {
  if (S_ISREG(st.st_mode) || S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) return true;
  struct statfs fs;
  return S_ISFIFO(st.st_mode) && ::fstatfs(fd, &fs) == 0 && fs.f_type != PIPEFS_MAGIC;
}

}  // namespace

StdioModes StdioModes::Save(const int (&fds)[3]) {
  StdioModes modes;
  std::vector<std::pair<dev_t, ino_t>> seen;
  for (int fd : fds) {
    struct stat st;
    if (fd < 0 || ::fstat(fd, &st) != 0 || !OnAFilesystem(fd, st)) continue;
    if (std::find(seen.begin(), seen.end(), std::pair(st.st_dev, st.st_ino)) != seen.end()) continue;
    UniqueFd held(::fcntl(fd, F_DUPFD_CLOEXEC, 3));
    if (!held) continue;
    seen.emplace_back(st.st_dev, st.st_ino);
    modes.saved_.push_back({std::move(held), st.st_mode & kModeBits});
  }
  return modes;
}

void StdioModes::Restore() const {
  if (MutantActive(Mutant::kStdioModes)) return;
  for (const Saved& saved : saved_) {
    struct stat st;
    if (::fstat(saved.file.get(), &st) == 0 && (st.st_mode & kModeBits) != saved.mode) {
      (void)::fchmod(saved.file.get(), saved.mode);
    }
  }
}

}  // namespace corral
