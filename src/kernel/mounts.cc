#include "kernel/mounts.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "base/hidden_from_others.h"
#include "base/mutant.h"
#include "kernel/kernel_abi.h"
#include "kernel/landlock.h"

namespace corral {
namespace {

// The new root is built on a tmpfs mounted here, inside the private namespace.
constexpr const char* kBuildBase = "/tmp";
constexpr const char* kMaskFile = ".corral-mask";
constexpr const char* kFileOverStaging = ".corral-file";  // a kFileOver's text, before it is bound
constexpr const char* kMaskDir = ".corral-maskdir";
constexpr const char* kSymlinkOverStaging = ".corral-symlink";  // a kSymlinkOver's link, before it is mounted

int Fail(ChildReport* report, ChildStage stage, int err, long index) {
  report->stage = stage;
  report->error = err;
  report->index = static_cast<int32_t>(index);
  return err == 0 ? EIO : err;
}

int OpenNoFollow(const char* path) {
  struct open_how how = {};
  how.flags = O_PATH | O_CLOEXEC;
  how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  return static_cast<int>(::syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof how));
}

int OpenTree(int dirfd, const char* path, unsigned flags) {
  return static_cast<int>(::syscall(SYS_open_tree, dirfd, path, flags));
}

int MoveMountTo(int from_fd, const char* target) {
  return static_cast<int>(::syscall(SYS_move_mount, from_fd, "", AT_FDCWD, target, kabi::kMoveMountFEmptyPath));
}

int SetAttr(int dirfd, const char* path, unsigned flags, uint64_t set) {
  kabi::MountAttr attr = {set, 0, 0, 0};
  return static_cast<int>(::syscall(SYS_mount_setattr, dirfd, path, flags, &attr, sizeof attr));
}

// mkdir -p for every component of `rel` except the last.
int MakeParents(const char* rel) {
  char buffer[PATH_MAX];
  size_t length = ::strlen(rel);
  if (length >= sizeof buffer) return ENAMETOOLONG;
  ::memcpy(buffer, rel, length + 1);
  for (size_t i = 1; i < length; ++i) {
    if (buffer[i] != '/') continue;
    buffer[i] = '\0';
    if (::mkdir(buffer, 0755) != 0 && errno != EEXIST) return errno;
    buffer[i] = '/';
  }
  return 0;
}

// Creates the mount point unless it exists (inside a bind, it usually does:
// an existing file is never opened, so the user's tree sees no event).
int MakeTarget(const char* rel, bool dir) {
  struct stat st;
  if (::lstat(rel, &st) == 0) return S_ISDIR(st.st_mode) == dir ? 0 : ENOTDIR;
  if (int err = MakeParents(rel); err != 0) return err;
  if (dir) return ::mkdir(rel, 0755) == 0 ? 0 : errno;
  int fd = ::open(rel, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) return errno;
  ::close(fd);
  return 0;
}

// Clones `fd` (or `path` relative to the cwd) and mounts the clone at `rel`.
int BindClone(int fd, const char* path, const char* rel, bool recursive, uint64_t attrs) {
  unsigned flags = kabi::kOpenTreeClone | kabi::kOpenTreeCloexec | (recursive ? AT_RECURSIVE : 0);
  int tree = fd >= 0 ? OpenTree(fd, "", flags | AT_EMPTY_PATH) : OpenTree(AT_FDCWD, path, flags);
  if (tree < 0) return errno;
  int err = 0;
  if (attrs != 0 && SetAttr(tree, "", AT_EMPTY_PATH | (recursive ? AT_RECURSIVE : 0), attrs) != 0) err = errno;
  if (err == 0 && MoveMountTo(tree, rel) != 0) err = errno;
  ::close(tree);
  return err;
}

// The target of a pinned mask, relative to the new root being built (the
// cwd): opened without following any symlink or leaving the root, and only
// when it is still the (dev, inode) and the type the mask walk recorded.
// Returns the O_PATH fd, or -errno (ESTALE: another file is there).
int OpenPinnedMaskTarget(const MountOp& op) {
  struct open_how how = {};
  how.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC;
  how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_BENEATH;
  int fd = static_cast<int>(::syscall(SYS_openat2, AT_FDCWD, op.target + 1, &how, sizeof how));
  if (fd < 0) return -errno;
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    return -err;
  }
  const bool same_device = op.Has(MountFlag::kInOverlay) || st.st_dev == op.pin.dev;
  if (!same_device || st.st_ino != op.pin.ino || S_ISDIR(st.st_mode) != op.Has(MountFlag::kDir)) {
    ::close(fd);
    return -ESTALE;
  }
  return fd;
}

// Mounts a clone of the empty mask `source` at `target_fd` (the pinned file
// itself, so a rename after the check moves nothing under the mask) or, with
// no fd, at `rel`.
int BindMask(const char* source, int target_fd, const char* rel, uint64_t attrs) {
  if (target_fd < 0) return BindClone(-1, source, rel, false, attrs);
  int tree = OpenTree(AT_FDCWD, source, kabi::kOpenTreeClone | kabi::kOpenTreeCloexec);
  if (tree < 0) return errno;
  int err = 0;
  if (SetAttr(tree, "", AT_EMPTY_PATH, attrs) != 0) err = errno;
  if (err == 0 && ::syscall(SYS_move_mount, tree, "", target_fd, "",
                            kabi::kMoveMountFEmptyPath | kabi::kMoveMountTEmptyPath) != 0) {
    err = errno;
  }
  ::close(tree);
  return err;
}

// A new regular file at `rel` holding `text`. Returns 0 or an errno.
int WriteNewFile(const char* rel, const char* text, mode_t mode) {
  int fd = ::open(rel, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, mode);
  if (fd < 0) return errno;
  size_t length = ::strlen(text);
  int err = 0;
  for (size_t done = 0; done < length && err == 0;) {
    ssize_t n = ::write(fd, text + done, length - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      err = n < 0 ? errno : EIO;
    } else {
      done += static_cast<size_t>(n);
    }
  }
  ::close(fd);
  return err;
}

int AddRuleAt(int ruleset_fd, const char* rel, uint64_t access) {
  if (ruleset_fd < 0 || access == 0) return 0;
  int fd = ::open(rel, O_PATH | O_CLOEXEC);
  if (fd < 0) return errno;
  int err = LandlockAddPathChild(ruleset_fd, fd, access);
  ::close(fd);
  return err;
}

int OpenSources(MountOp* ops, size_t count, ChildReport* report) {
  for (size_t i = 0; i < count; ++i) {
    MountOp& op = ops[i];
    if ((op.kind != MountKind::kBind && op.kind != MountKind::kOverlay) || op.Has(MountFlag::kPrepared)) continue;
    op.fd = OpenNoFollow(op.source);
    if (op.fd < 0) {
      if (op.Has(MountFlag::kOptional) && errno == ENOENT) continue;
      return Fail(report, ChildStage::kOpenSource, errno, static_cast<long>(i));
    }
    if (op.Has(MountFlag::kPinned)) {
      struct stat st;
      if (::fstat(op.fd, &st) != 0) return Fail(report, ChildStage::kOpenSource, errno, static_cast<long>(i));
      if ((st.st_dev != op.pin.dev || st.st_ino != op.pin.ino) && !MutantActive(Mutant::kPinCheck)) {
        return Fail(report, ChildStage::kPinChanged, ESTALE, static_cast<long>(i));
      }
    }
  }
  return 0;
}

// An overlayfs, detached: `lower` (the pinned lower layer's O_PATH fd) under
// the `upper` and `work` directories of the run's overlay directory `dir`,
// each opened without following a symlink. The layers are named to the
// kernel as /proc/self/fd/N, so no path is walked again (and no ',' or ':'
// in a path can add an option). Returns the new mount's fd, or -errno.
int MakeOverlay(int lower, const char* dir) {
#if defined(CORRAL_HOST_SIMULATION) && CORRAL_HOST_SIMULATION
  // Tests only (CMakeLists.txt): a kernel, or a state directory's
  // filesystem, on which overlayfs cannot work.
  if (const char* refused = std::getenv("CORRAL_TEST_OVERLAY_REFUSED");
      refused != nullptr && std::string_view(refused) == "1") {
    return -EINVAL;
  }
#endif
  int dir_fd = OpenNoFollow(dir);
  if (dir_fd < 0) return -errno;
  int upper = ::openat(dir_fd, "upper", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  int upper_err = errno;
  int work = ::openat(dir_fd, "work", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  int work_err = errno;
  ::close(dir_fd);
  int fs = -1, err = 0;
  if (upper < 0) err = upper_err;
  if (err == 0 && work < 0) err = work_err;
  if (err == 0) {
    fs = static_cast<int>(::syscall(SYS_fsopen, "overlay", kabi::kFsopenCloexec));
    if (fs < 0) err = errno;
  }
  auto set = [&](const char* key, int fd) {
    if (err != 0) return;
    char value[32];
    int at = 0;
    const char prefix[] = "/proc/self/fd/";
    for (const char* p = prefix; *p != '\0'; ++p) value[at++] = *p;
    char digits[12];
    int n = 0;
    for (unsigned v = static_cast<unsigned>(fd); n == 0 || v != 0; v /= 10) digits[n++] = static_cast<char>('0' + v % 10);
    while (n > 0) value[at++] = digits[--n];
    value[at] = '\0';
    if (::syscall(SYS_fsconfig, fs, kabi::kFsconfigSetString, key, value, 0) != 0) err = errno;
  };
  set("lowerdir", lower);
  set("upperdir", upper);
  set("workdir", work);
  if (err == 0 && ::syscall(SYS_fsconfig, fs, kabi::kFsconfigSetFlag, "userxattr", nullptr, 0) != 0) err = errno;
  if (err == 0 && ::syscall(SYS_fsconfig, fs, kabi::kFsconfigCmdCreate, nullptr, nullptr, 0) != 0) err = errno;
  int mount_fd = -1;
  if (err == 0) {
    mount_fd = static_cast<int>(::syscall(SYS_fsmount, fs, kabi::kFsmountCloexec, 0));
    if (mount_fd < 0) err = errno;
  }
  if (fs >= 0) ::close(fs);
  if (upper >= 0) ::close(upper);
  if (work >= 0) ::close(work);
  return err != 0 ? -err : mount_fd;
}

// Replaces each opened bind source by a detached clone of its tree. Done
// before the new root's tmpfs is mounted at kBuildBase: a clone made later of
// a grant that holds kBuildBase (--allow-read /tmp) would show the root under
// construction instead of the host's tree.
int CloneSources(MountOp* ops, size_t count, ChildReport* report) {
  for (size_t i = 0; i < count; ++i) {
    MountOp& op = ops[i];
    if (op.kind == MountKind::kOverlay && op.fd >= 0) {
      int overlay = MakeOverlay(op.fd, op.options);
      if (overlay < 0) return Fail(report, ChildStage::kOverlay, -overlay, static_cast<long>(i));
      ::close(op.fd);
      op.fd = overlay;
      continue;
    }
    if (op.kind != MountKind::kBind || op.fd < 0 || op.Has(MountFlag::kPrepared)) continue;
    int tree = OpenTree(op.fd, "", kabi::kOpenTreeClone | kabi::kOpenTreeCloexec | AT_EMPTY_PATH | AT_RECURSIVE);
    if (tree < 0) return Fail(report, ChildStage::kBind, errno, static_cast<long>(i));
    ::close(op.fd);
    op.fd = tree;
  }
  return 0;
}

// Attaches a detached tree (OpenSources' clone) at `rel` with `attrs`.
int AttachTree(int tree, const char* rel, uint64_t attrs) {
  if (attrs != 0 && SetAttr(tree, "", AT_EMPTY_PATH | AT_RECURSIVE, attrs) != 0) return errno;
  return MoveMountTo(tree, rel) != 0 ? errno : 0;
}

// Masks each entry of the fresh procfs at `rel` that others may not use
// (HiddenFromOthers), for a root caller, who owns them: at the top level
// (slabinfo, kpageflags, ...) and below it (tty/driver). It lists the
// sandbox's own procfs, whose PID namespace holds init alone. Left out: a
// process directory (a digit first; it follows its process's owner), a
// symlink (self, net, mounts: no file of its own), and the sysctl tree
// (sys), which Landlock and the read-only mounts keep unwritable and whose
// few root-only entries SECURITY.md lists. Not walked either: irq, one
// directory per interrupt whose files the kernel makes 0444 or 0644 (about
// two thirds of the entries below /proc, and of the walk's time); the test
// that holds this rule walks the host's whole /proc, irq included. `path`
// holds `length` bytes of the directory's path and has room for PATH_MAX.
int MaskRootOnlyProcBelow(char* path, size_t length, int depth, uint64_t attrs) {
  constexpr int kMaxDepth = 6;
  int dir = ::open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dir < 0) return errno;
  alignas(8) char buffer[4096];
  int err = 0;
  while (err == 0) {
    ssize_t got = ::getdents64(dir, buffer, sizeof buffer);
    if (got <= 0) {
      if (got < 0) err = errno;
      break;
    }
    for (ssize_t at = 0; at < got && err == 0;) {
      const auto* entry = reinterpret_cast<const struct dirent64*>(buffer + at);
      at += entry->d_reclen;
      const char* name = entry->d_name;
      if (name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0'))) continue;
      if (entry->d_type == DT_LNK) continue;
      if (depth == 0 && ((name[0] >= '0' && name[0] <= '9') || ::strcmp(name, "sys") == 0 || ::strcmp(name, "irq") == 0)) {
        continue;
      }
      struct stat st;
      if (::fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
        err = errno;
        break;
      }
      const bool hidden = HiddenFromOthers(st.st_mode);
      if (!hidden && (!S_ISDIR(st.st_mode) || depth + 1 >= kMaxDepth)) continue;
      const size_t name_length = ::strlen(name);
      if (length + 1 + name_length + 1 > PATH_MAX) {
        err = ENAMETOOLONG;
        break;
      }
      path[length] = '/';
      ::memcpy(path + length + 1, name, name_length + 1);
      err = hidden ? BindMask(S_ISDIR(st.st_mode) ? kMaskDir : kMaskFile, -1, path, attrs)
                   : MaskRootOnlyProcBelow(path, length + 1 + name_length, depth + 1, attrs);
      path[length] = '\0';
    }
  }
  ::close(dir);
  return err;
}

int MaskRootOnlyProc(const char* rel, uint64_t attrs) {
  char path[PATH_MAX];
  const size_t length = ::strlen(rel);
  if (length + 1 > sizeof path) return ENAMETOOLONG;
  ::memcpy(path, rel, length + 1);
  return MaskRootOnlyProcBelow(path, length, 0, attrs);
}

// The sandbox's procfs is mounted read-only. Its entries outside the process
// directories are the kernel's own, one per kernel and shared by every procfs
// instance: a chmod of /proc/version here would change it for the host, for
// every container and every later sandbox (each procfs mounted afterwards
// shows the new mode). A root caller owns them, and chmod needs no
// capability from an owner; Landlock, which grants /proc read-only, has no
// right for chmod at all. Read-only, every such change fails with EROFS.
// Where Landlock runs nothing else changes (it refuses every write to
// /proc); without it, the whole of /proc is as read-only as its writable
// corners (sysctls, sysrq) were before.
unsigned long ProcReadOnly() { return MutantActive(Mutant::kProcWritable) ? 0 : MS_RDONLY; }

// The mask mutants (base/mutant.h): /etc's secrets, or every other mask
// (/proc's are MaskRootOnlyProc's, under the proc_masks mutant).
bool MaskMutated(const char* target) {
  bool etc = ::strncmp(target, "/etc/", 5) == 0;
  return etc ? MutantActive(Mutant::kEtcMasks) : MutantActive(Mutant::kForbidMasks);
}

}  // namespace

int ApplyMountsChild(MountOp* ops, size_t count, int ruleset_fd, uint64_t root_landlock, ChildReport* report) {
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
    return Fail(report, ChildStage::kMountPrivate, errno, -1);
  }
  if (int err = OpenSources(ops, count, report); err != 0) return err;
  if (int err = CloneSources(ops, count, report); err != 0) return err;

  if (::mount("tmpfs", kBuildBase, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") != 0 || ::chdir(kBuildBase) != 0) {
    return Fail(report, ChildStage::kNewRoot, errno, -1);
  }
  int mask_fd = ::open(kMaskFile, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0);
  if (mask_fd < 0 || ::mkdir(kMaskDir, 0) != 0) return Fail(report, ChildStage::kMask, errno, -1);
  ::close(mask_fd);

  for (size_t i = 0; i < count; ++i) {
    MountOp& op = ops[i];
    const char* rel = op.target + 1;
    long index = static_cast<long>(i);
    if (op.kind == MountKind::kSymlink) {
      if (int err = MakeParents(rel); err != 0) return Fail(report, ChildStage::kMkdir, err, index);
      if (::symlink(op.source, rel) != 0) return Fail(report, ChildStage::kSymlink, errno, index);
      continue;
    }
    if (op.kind == MountKind::kFile) {
      if (int err = MakeParents(rel); err != 0) return Fail(report, ChildStage::kMkdir, err, index);
      if (int err = WriteNewFile(rel, op.source, 0600); err != 0) return Fail(report, ChildStage::kMkdir, err, index);
      continue;
    }
    if (op.kind == MountKind::kFileOver) {
      // An absent target or a symlink (one into /run that is not in the
      // view dangles) leaves the reader to its default.
      struct stat st;
      if (::lstat(rel, &st) != 0 || !S_ISREG(st.st_mode)) continue;
      int err = WriteNewFile(kFileOverStaging, op.source, 0644);
      uint64_t sealed = kabi::kMountAttrNosuid | kabi::kMountAttrNodev | kabi::kMountAttrRdonly | kabi::kMountAttrNoexec;
      if (err == 0) err = BindMask(kFileOverStaging, -1, rel, sealed);
      if (::unlink(kFileOverStaging) != 0 && err == 0) err = errno;
      if (err != 0) return Fail(report, ChildStage::kBind, err, index);
      continue;
    }
    if (op.kind == MountKind::kSymlinkOver) {
      // Mounted on the very file the policy pinned, never on one put there
      // since; the symlink itself is a mount of its own (open_tree of the
      // link, not followed), so the command cannot remove or replace it.
      int target = OpenPinnedMaskTarget(op);
      if (target < 0) return Fail(report, ChildStage::kBind, -target, index);
      int err = ::symlink(op.source, kSymlinkOverStaging) == 0 ? 0 : errno;
      int tree = err == 0 ? OpenTree(AT_FDCWD, kSymlinkOverStaging,
                                     kabi::kOpenTreeClone | kabi::kOpenTreeCloexec | AT_SYMLINK_NOFOLLOW)
                          : -1;
      if (err == 0 && tree < 0) err = errno;
      if (err == 0 && ::syscall(SYS_move_mount, tree, "", target, "",
                                kabi::kMoveMountFEmptyPath | kabi::kMoveMountTEmptyPath) != 0) {
        err = errno;
      }
      if (tree >= 0) ::close(tree);
      ::close(target);
      if (::unlink(kSymlinkOverStaging) != 0 && err == 0) err = errno;
      if (err != 0) return Fail(report, ChildStage::kBind, err, index);
      continue;
    }
    if (op.kind == MountKind::kBind && op.fd < 0) continue;  // optional and absent
    // A pinned mask is mounted on the file the walk saw, never on one it makes.
    if (!(op.kind == MountKind::kMask && op.Has(MountFlag::kPinned))) {
      int err = MakeTarget(rel, op.Has(MountFlag::kDir));
      if (err != 0) return Fail(report, ChildStage::kMkdir, err, index);
    }
    uint64_t attrs = kabi::kMountAttrNosuid | (op.Has(MountFlag::kDevices) ? 0 : kabi::kMountAttrNodev);
    switch (op.kind) {
      case MountKind::kOverlay:
      case MountKind::kBind: {
        if (op.Has(MountFlag::kReadOnly) && !MutantActive(Mutant::kReadOnlyBinds)) attrs |= kabi::kMountAttrRdonly;
        if (op.Has(MountFlag::kNoexec) && !MutantActive(Mutant::kNoexecBinds)) attrs |= kabi::kMountAttrNoexec;
        // A prepared tree carries its attributes already, and the host's
        // user namespace owns it: mount_setattr would be refused here.
        if (int err = AttachTree(op.fd, rel, op.Has(MountFlag::kPrepared) ? 0 : attrs); err != 0) {
          return Fail(report, ChildStage::kBind, err, index);
        }
        if (ruleset_fd >= 0 && op.landlock != 0) {
          if (int err = LandlockAddPathChild(ruleset_fd, op.fd, op.landlock); err != 0) {
            return Fail(report, ChildStage::kLandlock, err, index);
          }
        }
        break;
      }
      case MountKind::kTmpfs:
        if (::mount("tmpfs", rel, "tmpfs", MS_NOSUID | MS_NODEV, op.options) != 0) {
          return Fail(report, ChildStage::kTmpfs, errno, index);
        }
        if (int err = AddRuleAt(ruleset_fd, rel, op.landlock); err != 0) {
          return Fail(report, ChildStage::kLandlock, err, index);
        }
        break;
      case MountKind::kMask: {
        if (MaskMutated(op.target)) break;
        attrs |= kabi::kMountAttrRdonly | kabi::kMountAttrNoexec | kabi::kMountAttrNodev;
        int target = -1;
        if (op.Has(MountFlag::kPinned)) {
          target = OpenPinnedMaskTarget(op);
          if (target < 0) return Fail(report, ChildStage::kMaskMoved, -target, index);
        }
        int err = BindMask(op.Has(MountFlag::kDir) ? kMaskDir : kMaskFile, target, rel, attrs);
        if (target >= 0) ::close(target);
        if (err != 0) return Fail(report, ChildStage::kMask, err, index);
        break;
      }
      case MountKind::kProc:
#if defined(CORRAL_HOST_SIMULATION) && CORRAL_HOST_SIMULATION
        // Tests only (CMakeLists.txt): a host that masks parts of its /proc,
        // where the kernel refuses a fresh one so.
        if (const char* refused = std::getenv("CORRAL_TEST_PROC_MOUNT_REFUSED");
            refused != nullptr && std::string_view(refused) == "1") {
          return Fail(report, ChildStage::kProc, EPERM, index);
        }
#endif
        if (MutantActive(Mutant::kHostProc)) {
          // Before pivot_root, "/proc" is still the host's procfs.
          if (::mount("/proc", rel, nullptr, MS_BIND | MS_REC, nullptr) != 0) {
            return Fail(report, ChildStage::kProc, errno, index);
          }
        } else if (::mount("proc", rel, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC | ProcReadOnly(), nullptr) != 0) {
          return Fail(report, ChildStage::kProc, errno, index);
        }
        if (op.Has(MountFlag::kMaskRootOnly) && !MutantActive(Mutant::kProcMasks)) {
          uint64_t mask_attrs = attrs | kabi::kMountAttrRdonly | kabi::kMountAttrNoexec | kabi::kMountAttrNodev;
          if (int err = MaskRootOnlyProc(rel, mask_attrs); err != 0) return Fail(report, ChildStage::kMask, err, index);
        }
        if (int err = AddRuleAt(ruleset_fd, rel, op.landlock); err != 0) {
          return Fail(report, ChildStage::kLandlock, err, index);
        }
        break;
      case MountKind::kDevpts:
        if (::mount("devpts", rel, "devpts", MS_NOSUID | MS_NOEXEC, op.options) != 0) {
          return Fail(report, ChildStage::kDevpts, errno, index);
        }
        break;
      case MountKind::kSymlink:
      case MountKind::kFile:
      case MountKind::kFileOver:
      case MountKind::kSymlinkOver:
        break;
    }
    if (op.fd >= 0) {
      ::close(op.fd);
      op.fd = -1;
    }
  }

  if (::unlink(kMaskFile) != 0 || ::rmdir(kMaskDir) != 0) return Fail(report, ChildStage::kMask, errno, -1);
  for (size_t i = 0; i < count; ++i) {
    if (!ops[i].Has(MountFlag::kSeal)) continue;
    if (SetAttr(AT_FDCWD, ops[i].target + 1, 0, kabi::kMountAttrRdonly) != 0) {
      return Fail(report, ChildStage::kSeal, errno, static_cast<long>(i));
    }
  }
  if (int err = AddRuleAt(ruleset_fd, ".", root_landlock); err != 0) {
    return Fail(report, ChildStage::kLandlock, err, -1);
  }
  if (SetAttr(AT_FDCWD, ".", 0, kabi::kMountAttrRdonly) != 0) return Fail(report, ChildStage::kSeal, errno, -1);

  if (::syscall(SYS_pivot_root, ".", ".") != 0) return Fail(report, ChildStage::kPivot, errno, -1);
  if (::umount2(".", MNT_DETACH) != 0 || ::chdir("/") != 0) return Fail(report, ChildStage::kPivot, errno, -1);
  return 0;
}

int AddHostRulesChild(MountOp* ops, size_t count, int ruleset_fd, ChildReport* report) {
  if (int err = OpenSources(ops, count, report); err != 0) return err;
  for (size_t i = 0; i < count; ++i) {
    MountOp& op = ops[i];
    if (op.kind != MountKind::kBind || op.fd < 0) continue;
    if (ruleset_fd >= 0 && op.landlock != 0) {
      if (int err = LandlockAddPathChild(ruleset_fd, op.fd, op.landlock); err != 0) {
        return Fail(report, ChildStage::kLandlock, err, static_cast<long>(i));
      }
    }
    ::close(op.fd);
    op.fd = -1;
  }
  return 0;
}

}  // namespace corral
