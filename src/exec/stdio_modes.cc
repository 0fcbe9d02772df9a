#include "exec/stdio_modes.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>

#include "base/mutant.h"
#include "exec/view_devices.h"

namespace corral {
namespace {

constexpr mode_t kModeBits = 07777;
constexpr size_t kRecordSize = 5;  // "0644\n"

// A file a chmod through a descriptor changes for others: not a pipe (its
// inode is the pipe's own) or a socket.
bool OnAFilesystem(int fd, const struct stat& st) {
  if (S_ISREG(st.st_mode) || S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) return true;
  struct statfs fs;
  return S_ISFIFO(st.st_mode) && ::fstatfs(fd, &fs) == 0 && fs.f_type != PIPEFS_MAGIC;
}

int Flock(int fd, int operation) {
  while (::flock(fd, operation) != 0) {
    if (errno != EINTR) return errno;
  }
  return 0;
}

std::string RecordName(const struct stat& st) {
  char name[64];
  std::snprintf(name, sizeof name, "%llx-%llx", static_cast<unsigned long long>(st.st_dev),
                static_cast<unsigned long long>(st.st_ino));
  return name;
}

std::optional<mode_t> ReadRecord(int fd) {
  char text[kRecordSize + 1] = {};
  if (::pread(fd, text, sizeof text, 0) != static_cast<ssize_t>(kRecordSize) || text[4] != '\n') return std::nullopt;
  mode_t mode = 0;
  for (int i = 0; i < 4; ++i) {
    if (text[i] < '0' || text[i] > '7') return std::nullopt;
    mode = mode * 8 + static_cast<mode_t>(text[i] - '0');
  }
  return mode;
}

int WriteRecord(int fd, mode_t mode) {
  char text[kRecordSize + 1];
  std::snprintf(text, sizeof text, "%04o\n", static_cast<unsigned>(mode & kModeBits));
  if (::ftruncate(fd, 0) != 0) return errno;
  ssize_t wrote = ::pwrite(fd, text, kRecordSize, 0);
  return wrote == static_cast<ssize_t>(kRecordSize) ? 0 : wrote < 0 ? errno : EIO;
}

// The shared record of the file `st` in `records` (whose lock the caller
// holds), flocked shared, and the first mode of the overlapping runs: the
// record's, when another run holds it, else `st`'s, written into it.
Result<std::pair<UniqueFd, mode_t>> TakeRecord(int records, const std::string& name, const struct stat& st) {
  UniqueFd record(::openat(records, name.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!record) return Error::FromErrno(ErrorKind::kIo, "cannot open the record " + name, "openat", errno);
  struct stat own;
  if (::fstat(record.get(), &own) != 0 || !S_ISREG(own.st_mode)) {
    return Error(ErrorKind::kIo, "the record " + name + " is not a regular file");
  }
  mode_t mode = st.st_mode & kModeBits;
  if (int e = Flock(record.get(), LOCK_EX | LOCK_NB); e == 0) {
    // No run holds it: a new record, or one a killed corral left. One that
    // cannot be written (a full disk) goes: left empty, it would read as a
    // record no run holds.
    if (int w = WriteRecord(record.get(), mode); w != 0) {
      (void)::unlinkat(records, name.c_str(), 0);
      return Error::FromErrno(ErrorKind::kIo, "cannot write the record " + name, "pwrite", w);
    }
  } else if (e == EWOULDBLOCK) {
    std::optional<mode_t> first = ReadRecord(record.get());
    if (!first) return Error(ErrorKind::kIo, "the record " + name + " held by another run is not a mode");
    mode = *first;
  } else {
    return Error::FromErrno(ErrorKind::kIo, "cannot lock the record " + name, "flock", e);
  }
  // Shared from here on. Converting lets go before it locks again, which no
  // other run sees: every run takes `lock` before it touches a record.
  if (int e = Flock(record.get(), LOCK_SH); e != 0) {
    return Error::FromErrno(ErrorKind::kIo, "cannot lock the record " + name, "flock", e);
  }
  return std::pair(std::move(record), mode);
}

// `records/lock`, flocked exclusive; or why not.
Result<UniqueFd> LockRecords(int records) {
  UniqueFd lock(::openat(records, "lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!lock) return Error::FromErrno(ErrorKind::kIo, "cannot open the records' lock", "openat", errno);
  if (int e = Flock(lock.get(), LOCK_EX); e != 0) {
    return Error::FromErrno(ErrorKind::kIo, "cannot lock the records", "flock", e);
  }
  return lock;
}

}  // namespace

Result<StdioModes> StdioModes::Save(const int (&fds)[3], ViewDevices devices, const OpenRecords& open_records) {
  StdioModes modes;
  std::vector<std::pair<dev_t, ino_t>> seen;
  for (int fd : fds) {
    struct stat st;
    if (fd < 0 || ::fstat(fd, &st) != 0 || !OnAFilesystem(fd, st)) continue;
    if (devices == ViewDevices::kReopened && S_ISCHR(st.st_mode) && ViewDevicePath(st.st_rdev) != nullptr) continue;
    if (std::find(seen.begin(), seen.end(), std::pair(st.st_dev, st.st_ino)) != seen.end()) continue;
    UniqueFd held(::fcntl(fd, F_DUPFD_CLOEXEC, 3));
    if (!held) {
      return Error::FromErrno(ErrorKind::kIo,
                              "cannot hold descriptor " + std::to_string(fd) +
                                  " to put its file's mode back after the run; nothing was run",
                              "fcntl", errno);
    }
    seen.emplace_back(st.st_dev, st.st_ino);
    modes.saved_.push_back({std::move(held), st.st_mode & kModeBits, UniqueFd(), RecordName(st)});
  }
  if (modes.saved_.empty() || MutantActive(Mutant::kStdioRecords)) return modes;
  // A run that holds no record while another does would take the mode its
  // command set for the first one (a record no run holds is not trusted):
  // records that cannot be taken refuse the run, as a file that cannot be
  // held does. Only a run with no state directory at all goes without.
  auto refuse = [](const Error& why) {
    return Error(ErrorKind::kIo, "the modes of the files on the command's stdin, stdout and stderr cannot be shared "
                                 "with runs that overlap this one (corral's state directory, stdio/: " +
                                     why.ToString() + "); nothing was run");
  };
  Result<UniqueFd> opened = open_records ? open_records() : Result<UniqueFd>(UniqueFd());
  if (!opened.ok()) return refuse(opened.error());
  UniqueFd records = std::move(opened).value();
  if (!records) {
    modes.note_ = "no state directory: this run puts back the modes it saw, not those of a run it overlaps";
    return modes;
  }
  Result<UniqueFd> locked = LockRecords(records.get());
  if (!locked.ok()) return refuse(locked.error());
  UniqueFd lock = std::move(locked).value();
  modes.records_ = std::move(records);
  for (Saved& saved : modes.saved_) {
    struct stat st;
    if (::fstat(saved.file.get(), &st) != 0) return refuse(Error::FromErrno(ErrorKind::kIo, "fstat", "fstat", errno));
    Result<std::pair<UniqueFd, mode_t>> record = TakeRecord(modes.records_.get(), saved.name, st);
    if (!record.ok()) {
      lock.Reset();     // Restore takes it again, through another descriptor
      modes.Restore();  // lets go of the records taken so far
      return refuse(record.error());
    }
    saved.record = std::move(record->first);
    saved.mode = record->second;
  }
  return modes;
}

void StdioModes::Restore() {
  if (MutantActive(Mutant::kStdioModes)) return;
  std::optional<Result<UniqueFd>> lock;
  for (Saved& saved : saved_) {
    struct stat st;
    if (::fstat(saved.file.get(), &st) == 0 && (st.st_mode & kModeBits) != saved.mode) {
      (void)::fchmod(saved.file.get(), saved.mode);
    }
    if (!saved.record) continue;
    if (!lock) lock = LockRecords(records_.get());
    // The last run that holds the record removes it (every one of them
    // holds it shared, so an exclusive lock now means none is left).
    struct stat named, own;
    if (lock->ok() && Flock(saved.record.get(), LOCK_EX | LOCK_NB) == 0 &&
        ::fstatat(records_.get(), saved.name.c_str(), &named, AT_SYMLINK_NOFOLLOW) == 0 &&
        ::fstat(saved.record.get(), &own) == 0 && named.st_dev == own.st_dev && named.st_ino == own.st_ino) {
      (void)::unlinkat(records_.get(), saved.name.c_str(), 0);
    }
    saved.record.Reset();
  }
  saved_.clear();
}

}  // namespace corral
