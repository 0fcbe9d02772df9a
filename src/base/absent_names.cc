#include "base/absent_names.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <memory>

#include "base/mutant.h"
#include "base/unique_fd.h"

namespace corral {
namespace {

// Filesystems whose getdents64 lists exactly what a lookup finds.
bool ListsWhatLookupsFind(int fd) {
  struct statfs fs;
  if (::fstatfs(fd, &fs) != 0) return false;
  switch (static_cast<unsigned long>(fs.f_type)) {
    case EXT4_SUPER_MAGIC:  // ext2 and ext3 share it
    case XFS_SUPER_MAGIC:
    case BTRFS_SUPER_MAGIC:
    case TMPFS_MAGIC:
    case OVERLAYFS_SUPER_MAGIC:
    case F2FS_SUPER_MAGIC:
    case 0xca451a4eUL:  // bcachefs
      return true;
    default:
      return false;
  }
}

// ASCII lower case; false when `name` has a byte outside ASCII.
bool FoldAscii(std::string_view name, std::string* folded) {
  folded->clear();
  folded->reserve(name.size());
  for (char c : name) {
    auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x80) return false;
    folded->push_back(byte >= 'A' && byte <= 'Z' ? static_cast<char>(byte - 'A' + 'a') : c);
  }
  return true;
}

}  // namespace

AbsentNames AbsentNames::Read(int dir) {
  AbsentNames names;
  UniqueFd fd(::openat(dir, ".", O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_CLOEXEC));
  if (!fd || !ListsWhatLookupsFind(fd.get())) return names;
  // A large directory costs more to list than the lookups it would save:
  // one whose size says so is not read at all, and one that turns out
  // larger than the buffer is not parsed.
  struct stat st;
  if (::fstat(fd.get(), &st) != 0 || st.st_size < 0 || static_cast<size_t>(st.st_size) > kMaxListingBytes) return names;
  std::unique_ptr<char[]> buffer(new char[kMaxListingBytes]);
  size_t filled = 0;
  for (;;) {
    if (filled == kMaxListingBytes) return names;
    ssize_t got = ::getdents64(fd.get(), buffer.get() + filled, kMaxListingBytes - filled);
    if (got < 0) return names;
    if (got == 0) break;
    filled += static_cast<size_t>(got);
  }
  std::string folded;
  for (size_t at = 0; at < filled;) {
    const auto* entry = reinterpret_cast<const struct dirent64*>(buffer.get() + at);
    at += entry->d_reclen;
    std::string_view name = entry->d_name;
    if (name == "." || name == "..") continue;
    bool ascii = FoldAscii(name, &folded);
    if (!ascii && !MutantActive(Mutant::kAbsentNamesFold)) return AbsentNames();
    names.folded_.push_back(MutantActive(Mutant::kAbsentNamesFold) ? std::string(name) : folded);
  }
  std::sort(names.folded_.begin(), names.folded_.end());
  names.complete_ = true;
  return names;
}

bool AbsentNames::CertainlyAbsent(std::string_view name) const {
  if (!complete_) return false;
  std::string folded;
  if (!FoldAscii(name, &folded)) return false;
  if (MutantActive(Mutant::kAbsentNamesFold)) folded = std::string(name);
  return !std::binary_search(folded_.begin(), folded_.end(), folded);
}

}  // namespace corral
