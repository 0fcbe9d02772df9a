#include "confine/mount_plan.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <set>

#include "base/invariant.h"
#include "base/mutant.h"
#include "kernel/kernel_abi.h"
#include "policy/filesystem_view.h"

namespace corral {
namespace {

constexpr std::array<const char*, 6> kDevices = {"/dev/null", "/dev/zero", "/dev/full",
                                                 "/dev/random", "/dev/urandom", "/dev/tty"};

bool CoveredByGrant(const Policy& policy, const std::string& path) {
  return policy.GrantFor(path) != nullptr;
}

// The Landlock rights of a private tmpfs (/tmp, $HOME) at `tree`. Landlock
// unions rights down the path, so an exec right here would reach every grant
// mounted below it: when a grant without exec lies there, the tree loses exec
// for the run (programs the command puts in it do not run either).
uint64_t PrivateTreeRights(const Policy& policy, const LandlockRights& rights, std::string_view tree) {
  Access access = Access::kRead | Access::kWrite | Access::kExec;
  for (const PathGrant& grant : policy.grants()) {
    if (IsWithin(grant.path.path, tree) && !Has(grant.access, Access::kExec)) access = Access::kRead | Access::kWrite;
  }
  return LandlockFsAccess(rights, access, true);
}

}  // namespace

uint64_t LandlockFsAccess(const LandlockRights& rights, Access access, bool is_dir) {
  using namespace kabi;
  uint64_t out = 0;
  if (Has(access, Access::kRead)) out |= kFsReadFile | kFsReadDir;
  if (Has(access, Access::kWrite)) {
    out |= kFsWriteFile | kFsRemoveDir | kFsRemoveFile | kFsMakeChar | kFsMakeDir | kFsMakeReg | kFsMakeSock |
           kFsMakeFifo | kFsMakeBlock | kFsMakeSym | kFsRefer | kFsTruncate | kFsIoctlDev;
  }
  if (Has(access, Access::kExec)) out |= kFsExecute;
  out &= rights.fs;
  if (!is_dir) out &= kFsFileRights;
  return out;
}

const char* MountPlan::Intern(std::string text) {
  strings_.push_back(std::move(text));
  return strings_.back().c_str();
}

MountOp MountPlan::MaskOp(const MaskedPath& mask) {
  MountOp op;
  op.kind = MountKind::kMask;
  op.flags = mask.is_dir ? MountFlag::kDir : MountFlag::kNone;
  if (mask.pinned) op.flags |= MountFlag::kPinned;
  op.pin = mask.id;
  op.target = Intern(mask.path);
  return op;
}

Result<void> MountPlan::SplitAround(const MountOp& op, const std::string& source, const std::string& target,
                                    const std::vector<std::string>& masks, std::vector<MountOp>& out,
                                    size_t& split) {
  if (std::find(masks.begin(), masks.end(), source) != masks.end()) return {};  // masked whole: no rule at all
  struct open_how how = {};
  how.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC;
  how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  int fd = static_cast<int>(::syscall(SYS_openat2, AT_FDCWD, source.c_str(), &how, sizeof how));
  if (fd < 0) {
    if (errno == ENOENT && op.Has(MountFlag::kOptional)) return {};
    return Error::FromErrno(ErrorKind::kUnsupported,
                            "landlock: cannot list " + source + " to leave its masked entries out of the rules",
                            "openat2", errno);
  }
  DIR* dir = ::fdopendir(fd);
  if (dir == nullptr) {
    int err = errno;
    ::close(fd);
    return Error::FromErrno(ErrorKind::kUnsupported, "landlock: cannot list " + source, "fdopendir", err);
  }
  ++split;
  std::vector<std::string> names;
  while (struct dirent* entry = ::readdir(dir)) {
    std::string_view name = entry->d_name;
    if (name != "." && name != "..") names.emplace_back(name);
  }
  std::sort(names.begin(), names.end());
  for (const std::string& name : names) {
    std::string child = source + "/" + name;
    struct stat st;
    if (::fstatat(::dirfd(dir), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;  // gone since the listing
    if (S_ISLNK(st.st_mode)) continue;
    std::vector<std::string> inside;
    for (const std::string& mask : masks) {
      if (IsWithin(mask, child)) inside.push_back(mask);
    }
    if (!inside.empty()) {
      if (S_ISDIR(st.st_mode)) {
        Result<void> deeper = SplitAround(op, child, target + "/" + name, inside, out, split);
        if (!deeper.ok()) {
          ::closedir(dir);
          return deeper;
        }
      }
      continue;  // the masked path itself, or a file under which no mask can lie
    }
    MountOp rule = op;
    const bool is_dir = S_ISDIR(st.st_mode);
    rule.flags = (op.flags & ~(MountFlag::kDir | MountFlag::kOptional | MountFlag::kPrepared)) | MountFlag::kPinned;
    if (is_dir) rule.flags |= MountFlag::kDir;
    rule.pin = {st.st_dev, st.st_ino};
    rule.landlock = is_dir ? op.landlock : op.landlock & kabi::kFsFileRights;
    rule.source = Intern(child);
    rule.target = Intern(target + "/" + name);
    rule.fd = -1;
    out.push_back(rule);
  }
  ::closedir(dir);
  return {};
}

Result<size_t> MountPlan::LeaveOutOfRules(const std::vector<MaskedPath>& masks) {
  std::vector<std::string> paths;
  for (const MaskedPath& mask : masks) {
    std::string path = mask.path;
    while (path.size() > 1 && path.back() == '/') path.pop_back();
    paths.push_back(std::move(path));
  }
  std::vector<MountOp> kept;
  size_t split = 0;
  for (const MountOp& op : ops) {
    std::vector<std::string> inside;
    if (op.kind == MountKind::kBind && op.source != nullptr && !op.Has(MountFlag::kPrepared)) {
      for (const std::string& path : paths) {
        if (IsWithin(path, op.source)) inside.push_back(path);
      }
    }
    if (inside.empty()) {
      kept.push_back(op);
      continue;
    }
    CORRAL_TRY(SplitAround(op, op.source, op.target, inside, kept, split));
  }
  std::stable_sort(kept.begin(), kept.end(),
                   [](const MountOp& a, const MountOp& b) { return std::string_view(a.target) < b.target; });
  ops = std::move(kept);
  return split;
}

void MountPlan::MaskProc() {
  for (MountOp& op : ops) {
    if (op.kind != MountKind::kProc) continue;
    if (MutantActive(Mutant::kMaskedProcView)) {
      // The masked_proc_view mutant (base/mutant.h): the host's /proc instead.
      op.kind = MountKind::kBind;
      op.flags = MountFlag::kDir | MountFlag::kReadOnly | MountFlag::kNoexec;
      op.source = "/proc";
      continue;
    }
    op.kind = MountKind::kTmpfs;
    op.flags = MountFlag::kDir | MountFlag::kSeal;
    op.options = "size=4k,nr_inodes=1,mode=0555";
  }
}

void MountPlan::AddMask(const MaskedPath& mask) {
  MountOp op = MaskOp(mask);
  auto at = std::upper_bound(ops.begin(), ops.end(), op, [](const MountOp& a, const MountOp& b) {
    return std::string_view(a.target) < b.target;
  });
  ops.insert(at, op);
}

void MountPlan::AddFileOver(std::string target, std::string text) {
  MountOp op;
  op.kind = MountKind::kFileOver;
  op.flags = MountFlag::kNone;
  op.target = Intern(std::move(target));
  op.source = Intern(std::move(text));
  auto at = std::upper_bound(ops.begin(), ops.end(), op, [](const MountOp& a, const MountOp& b) {
    return std::string_view(a.target) < b.target;
  });
  ops.insert(at, op);
}

bool MountPlan::AddStagedFile(const std::string& target, FileIdentity pin, const PinnedPath& stage,
                              const std::string& view_dir, uint64_t landlock) {
  auto bound = std::find_if(ops.begin(), ops.end(), [&](const MountOp& op) {
    return op.kind == MountKind::kBind && target == op.target && !op.Has(MountFlag::kDir);
  });
  if (bound == ops.end() || view_dir.empty() || view_dir.front() != '/') return false;
  MountOp link;
  link.kind = MountKind::kSymlinkOver;
  link.flags = MountFlag::kPinned;
  link.pin = pin;
  link.target = bound->target;
  link.source = Intern(view_dir + target.substr(target.rfind('/')));
  *bound = link;
  MountOp dir;
  dir.kind = MountKind::kBind;
  dir.flags = MountFlag::kDir | MountFlag::kPinned | MountFlag::kNoexec;
  dir.pin = stage.id;
  dir.landlock = landlock;
  dir.source = Intern(stage.path);
  dir.target = Intern(view_dir);
  auto at = std::upper_bound(ops.begin(), ops.end(), dir, [](const MountOp& a, const MountOp& b) {
    return std::string_view(a.target) < b.target;
  });
  ops.insert(at, dir);
  return true;
}

Result<void> MountPlan::OverlayWorkspace(const std::string& workspace, const std::string& overlay_dir) {
  return Overlay(workspace, overlay_dir, OverlayTree::kWorkspace);
}

Result<void> MountPlan::OverlayRoot(const std::string& root, const std::string& overlay_dir) {
  return Overlay(root, overlay_dir, OverlayTree::kRoot);
}

Result<void> MountPlan::SnapshotWorkspace(const std::string& workspace, const PinnedPath& copy,
                                          const std::map<std::string, FileIdentity>& pins) {
  return Overlay(workspace, copy.path, OverlayTree::kWorkspace, &copy, &pins);
}

Result<void> MountPlan::SnapshotRoot(const std::string& root, const PinnedPath& copy,
                                     const std::map<std::string, FileIdentity>& pins) {
  return Overlay(root, copy.path, OverlayTree::kRoot, &copy, &pins);
}

Result<void> MountPlan::Overlay(const std::string& tree, const std::string& overlay_dir, OverlayTree what,
                                const PinnedPath* copy, const std::map<std::string, FileIdentity>* pins) {
  const std::string flag = what == OverlayTree::kWorkspace ? "--overlay" : "--overlay-root " + tree;
  const std::string named = what == OverlayTree::kWorkspace ? "the workspace" : "that root";
  MountOp* root = nullptr;
  for (MountOp& op : ops) {
    if (op.kind == MountKind::kBind && op.target == std::string_view(tree)) root = &op;
  }
  if (root == nullptr || root->Has(MountFlag::kReadOnly)) {
    return Error(ErrorKind::kUsage, flag + ": " + (what == OverlayTree::kWorkspace ? "the workspace " + tree : named) +
                                        " is not writable in this run, so there is nothing to overlay. The command "
                                        "was not run.");
  }
  if (copy != nullptr) {
    if (MutantActive(Mutant::kSnapshotInPlace)) return {};  // the mutant: the real tree is bound, writable
    // The copy is bound where the tree was: the real tree is no source.
    root->source = Intern(copy->path);
    root->pin = copy->id;
    for (MountOp& op : ops) {
      if (op.kind != MountKind::kMask || !op.Has(MountFlag::kPinned) || !IsWithin(op.target, tree)) continue;
      auto placeholder = pins->find(op.target);
      if (placeholder != pins->end()) op.pin = placeholder->second;
    }
  } else {
    if (MutantActive(Mutant::kOverlayView)) return {};  // the mutant: the real tree is bound, writable
    root->kind = MountKind::kOverlay;
    root->options = Intern(overlay_dir);
    for (MountOp& op : ops) {
      if (op.kind == MountKind::kMask && op.Has(MountFlag::kPinned) && IsWithin(op.target, tree)) {
        op.flags |= MountFlag::kInOverlay;
      }
    }
  }
  std::string nested;
  std::erase_if(ops, [&](const MountOp& op) {
    if (op.kind != MountKind::kBind || op.Has(MountFlag::kReadOnly) || op.target == std::string_view(tree) ||
        !IsWithin(op.target, tree)) {
      return false;
    }
    if (op.landlock == 0) return true;  // an anchor: it grants nothing, it only pins
    if (nested.empty()) nested = op.target;
    return false;
  });
  if (!nested.empty()) {
    return Error(ErrorKind::kUsage, flag + ": " + nested + " is a writable grant inside " + named +
                                        "; it would write the real tree beside the overlay. Drop that grant. The "
                                        "command was not run.");
  }
  return {};
}

std::string MountPlan::Describe(long index) const {
  if (index < 0 || static_cast<size_t>(index) >= ops.size()) return "the new root";
  const MountOp& op = ops[static_cast<size_t>(index)];
  std::string out = op.target;
  if (op.kind == MountKind::kBind && op.source != nullptr && std::string(op.source) != op.target) {
    out += std::string(" (from ") + op.source + ")";
  }
  return out;
}

MountPlan BuildMountPlan(const Policy& policy, const LandlockRights& rights) {
  using namespace kabi;
  MountPlan plan;
  auto add = [&plan](MountOp op) { plan.ops.push_back(op); };
  // A bind whose grant gives no exec is a noexec mount: a second layer under
  // Landlock's rule, which a private tmpfs above it could widen.
  auto bind = [&](const PinnedPath& path, MountFlag write, uint64_t landlock) {
    const PathGrant* grant = policy.GrantFor(path.path);
    MountOp op;
    op.kind = MountKind::kBind;
    op.flags = write | MountFlag::kPinned;
    if (path.is_dir()) op.flags |= MountFlag::kDir;
    if (grant == nullptr || !Has(grant->access, Access::kExec)) op.flags |= MountFlag::kNoexec;
    op.pin = path.id;
    op.landlock = landlock;
    op.source = op.target = plan.Intern(path.path);
    add(op);
  };
  auto tmpfs = [&](const char* target, const char* options, uint64_t landlock, MountFlag seal) {
    MountOp op;
    op.kind = MountKind::kTmpfs;
    op.target = target;
    op.options = options;
    op.landlock = landlock;
    op.flags |= seal;
    add(op);
  };
  auto symlink = [&](std::string target, std::string text) {
    MountOp op;
    op.kind = MountKind::kSymlink;
    op.target = plan.Intern(std::move(target));
    op.source = plan.Intern(std::move(text));
    add(op);
  };

  // Each grant is bound writable exactly where ViewOf (policy/filesystem_view.h),
  // which the file tools' fence asks too, says the tree is writable.
  for (const PathGrant& grant : policy.grants()) {
    PathView view = ViewOf(policy, grant.path.path);
    MountFlag write = view == PathView::kWritable ? MountFlag::kNone : MountFlag::kReadOnly;
    Access access = view == PathView::kWritable ? grant.access : grant.access & (Access::kRead | Access::kExec);
    bind(grant.path, write, LandlockFsAccess(rights, access, grant.path.is_dir()));
  }
  // The mount_view mutant (base/mutant.h): each grant's parent directory is in the view too.
  for (const PathGrant& grant : policy.grants()) {
    if (!MutantActive(Mutant::kMountView)) break;
    std::string parent = grant.path.path.substr(0, grant.path.path.rfind('/'));
    struct stat st;
    if (parent.empty() || ::stat(parent.c_str(), &st) != 0) continue;
    bind(PinnedPath{parent, FileIdentity{st.st_dev, st.st_ino}, FileType::kDirectory}, MountFlag::kReadOnly, 0);
  }
  for (const SystemSymlink& link : policy.symlinks()) symlink(link.path, link.target);
  for (const MaskedPath& mask : policy.masks()) add(plan.MaskOp(mask));
  // Under --network none the sandbox's own name server (net/dns_stub.h)
  // answers every lookup at once; the host's resolv.conf names servers the
  // empty namespace cannot reach. (--allow-port keeps the host's network,
  // where no lookup gets out: no UDP, and port 53 only if allowed.)
  if (policy.network() == NetworkMode::kNone && !policy.egress().host_ports()) {
    MountOp op;
    op.kind = MountKind::kFileOver;
    op.flags = MountFlag::kNone;
    op.target = "/etc/resolv.conf";
    op.source = kSandboxResolvConf;
    add(op);
  }
  for (const PinnedPath& anchor : policy.protected_paths().anchors) {
    if (!MutantActive(Mutant::kProtectedAnchors)) bind(anchor, MountFlag::kNone, 0);
  }
  for (const ProtectedPath& entry : policy.protected_paths().paths) {
    if (entry.state != ProtectedPath::State::kDirectory && entry.state != ProtectedPath::State::kFile) continue;
    if (MutantActive(Mutant::kProtectedBinds)) continue;
    FileType type = entry.state == ProtectedPath::State::kDirectory ? FileType::kDirectory : FileType::kRegular;
    bind(PinnedPath{entry.path, entry.id, type}, MountFlag::kReadOnly, 0);
  }

  // A minimal /dev: its tmpfs is sealed read-only once the nodes are in place.
  tmpfs("/dev", "mode=0755", rights.fs & (kFsReadFile | kFsReadDir | kFsWriteFile | kFsIoctlDev | kFsTruncate),
        MountFlag::kSeal);
  for (const char* device : kDevices) {
    MountOp op;
    op.kind = MountKind::kBind;
    op.flags = MountFlag::kDevices;
    // Read-only binds: reading and writing a device node do not need a
    // writable mount, but chmod and chown of the host's node would (for a
    // root caller, the node is root's).
    if (!MutantActive(Mutant::kDeviceBinds)) op.flags |= MountFlag::kReadOnly;
    // Under the /dev rule already; the rule of its own matters only without
    // a mount view (best effort), where it is the host's node.
    op.landlock = rights.fs & (kFsReadFile | kFsWriteFile | kFsIoctlDev);
    if (std::string_view(device) == "/dev/tty") op.flags |= MountFlag::kOptional;
    op.source = op.target = device;
    add(op);
  }
  MountOp devpts;
  devpts.kind = MountKind::kDevpts;
  devpts.target = "/dev/pts";
  devpts.options = "newinstance,ptmxmode=0666,mode=0620";
  add(devpts);
  symlink("/dev/ptmx", "pts/ptmx");
  symlink("/dev/fd", "/proc/self/fd");
  symlink("/dev/stdin", "/proc/self/fd/0");
  symlink("/dev/stdout", "/proc/self/fd/1");
  symlink("/dev/stderr", "/proc/self/fd/2");
  // /tmp, $HOME and /dev/shm hold host memory: each is capped (policy/tmpfs_size.h).
  tmpfs("/dev/shm", plan.Intern(ShmTmpfsOptions(policy.tmpfs_size(), "1777")),
        LandlockFsAccess(rights, Access::kRead | Access::kWrite, true), MountFlag::kNone);

  MountOp proc;
  proc.kind = MountKind::kProc;
  proc.target = "/proc";
  proc.landlock = LandlockFsAccess(rights, Access::kRead, true);
  if (policy.masks_root_only_proc()) proc.flags |= MountFlag::kMaskRootOnly;
  // Mounted read-only (ProcReadOnly in kernel/mounts.cc), and granted read-only by Landlock.
  add(proc);

  if (!CoveredByGrant(policy, "/tmp") && MutantActive(Mutant::kPrivateTmp)) {
    MountOp op;
    op.kind = MountKind::kBind;
    op.flags = MountFlag::kDir;
    op.source = op.target = "/tmp";
    op.landlock = PrivateTreeRights(policy, rights, "/tmp");
    add(op);
  } else if (!CoveredByGrant(policy, "/tmp")) {
    tmpfs("/tmp", plan.Intern(TmpfsOptions(policy.tmpfs_size(), "1777")), PrivateTreeRights(policy, rights, "/tmp"),
          MountFlag::kNone);
  }
  const std::string& home = policy.home();
  if (home != "/" && !CoveredByGrant(policy, home) && !IsWithin(home, "/dev") &&
      !IsWithin(home, "/proc")) {
    tmpfs(plan.Intern(home), plan.Intern(TmpfsOptions(policy.tmpfs_size(), "0700")),
          PrivateTreeRights(policy, rights, home), MountFlag::kNone);
    // The user's git identity, and nothing else of their git config.
    std::string gitconfig = home + "/.gitconfig";
    if (!policy.home_gitconfig().empty() && !CoveredByGrant(policy, gitconfig)) {
      MountOp op;
      op.kind = MountKind::kFile;
      op.flags = MountFlag::kNone;
      op.source = plan.Intern(policy.home_gitconfig());
      op.target = plan.Intern(gitconfig);
      add(op);
    }
  }

  // A path both protected and hidden is hidden: the mask replaces the bind
  // (two mounts on one target would fight over it).
  std::set<std::string_view> masked;
  for (const MountOp& op : plan.ops) {
    if (op.kind == MountKind::kMask) masked.insert(op.target);
  }
  std::erase_if(plan.ops, [&](const MountOp& op) { return op.kind == MountKind::kBind && masked.count(op.target); });
  // Nothing is mounted inside a hidden directory: its mount point would lie
  // in the empty, unreadable directory over it (--forbid-read .git, which
  // holds protected files), and it is hidden anyway.
  std::vector<std::string_view> hidden_dirs;
  for (const MountOp& op : plan.ops) {
    if (op.kind != MountKind::kMask || !op.Has(MountFlag::kDir) || MutantActive(Mutant::kHiddenDirsEmpty)) continue;
    hidden_dirs.push_back(op.target);
  }
  std::erase_if(plan.ops, [&](const MountOp& op) {
    return std::any_of(hidden_dirs.begin(), hidden_dirs.end(), [&](std::string_view dir) {
      return dir != op.target && IsWithin(op.target, dir);
    });
  });
  // A pinned mask lands on the user's file seen through a bind above it;
  // over a grant it replaced there is nothing of the user's below, only the
  // empty mount point the child creates.
  for (MountOp& mask : plan.ops) {
    if (mask.kind != MountKind::kMask || !mask.Has(MountFlag::kPinned)) continue;
    bool below_a_bind = std::any_of(plan.ops.begin(), plan.ops.end(), [&](const MountOp& op) {
      return op.kind == MountKind::kBind && op.target != std::string_view(mask.target) && IsWithin(mask.target, op.target);
    });
    if (!below_a_bind) mask.flags &= ~MountFlag::kPinned;
  }
  std::stable_sort(plan.ops.begin(), plan.ops.end(),
                   [](const MountOp& a, const MountOp& b) { return std::string_view(a.target) < b.target; });
  for (const MountOp& op : plan.ops) {
    CORRAL_INVARIANT(op.target != nullptr && op.target[0] == '/' && std::string_view(op.target) != "/",
                     "every mount target is an absolute path below the new root");
    // (Device nodes excepted: writing to one does not write the mount.)
    CORRAL_INVARIANT(op.kind != MountKind::kBind || !op.Has(MountFlag::kReadOnly) || op.Has(MountFlag::kDevices) ||
                         (op.landlock & kFsWriteFile) == 0,
                     "a read-only bind never carries Landlock write rights");
  }
  plan.root_landlock = rights.fs & kFsReadDir;
  return plan;
}

std::string SandboxWorkingDirectory(const Policy& policy) {
  const std::string& cwd = policy.host().cwd;
  if (policy.GrantFor(cwd) != nullptr) return cwd;
  if (policy.workspace()) return policy.workspace()->path;
  return "/";
}

}  // namespace corral
