// TranslateReport: every stage a child can report, and the Error corral
// makes of it. The expected kinds and texts are written out here, not taken
// from the function, so a stage that lands in the wrong group fails.
#include "exec/spawn.h"

#include <cerrno>

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace corral {
namespace {

struct Row {
  ChildStage stage;
  int error;
  int index;
  ErrorKind kind;
  std::string message;
  std::string syscall;  // the stage's name, or "" when the error carries none
};

MountPlan TwoMounts() {
  MountPlan mounts;
  MountOp bind;
  bind.kind = MountKind::kBind;
  bind.source = "/host/project";
  bind.target = "/work";
  mounts.ops.push_back(bind);
  MountOp tmpfs;
  tmpfs.kind = MountKind::kTmpfs;
  tmpfs.target = "/tmp";
  mounts.ops.push_back(tmpfs);
  return mounts;
}

const std::string kNotRun = "; the command was not run";
const std::string kRoot = "mount view: cannot build the sandbox's root at ";

const Row kRows[] = {
    {ChildStage::kUserns, ENOSPC, -1, ErrorKind::kNamespace,
     "namespaces: cannot set up the user namespace" + kNotRun, "user namespace id maps"},
    {ChildStage::kHostname, EPERM, -1, ErrorKind::kNamespace,
     "namespaces: cannot set up the user namespace" + kNotRun, "hostname"},
    {ChildStage::kMountPrivate, EPERM, -1, ErrorKind::kMount, kRoot + "the new root" + kNotRun,
     "private mount propagation"},
    {ChildStage::kNewRoot, ENOMEM, -1, ErrorKind::kMount, kRoot + "the new root" + kNotRun, "new root tmpfs"},
    {ChildStage::kMkdir, EEXIST, 1, ErrorKind::kMount, kRoot + "/tmp" + kNotRun, "mount point"},
    {ChildStage::kBind, EACCES, 0, ErrorKind::kMount, kRoot + "/work (from /host/project)" + kNotRun, "bind mount"},
    {ChildStage::kTmpfs, ENOMEM, 1, ErrorKind::kMount, kRoot + "/tmp" + kNotRun, "tmpfs mount"},
    {ChildStage::kSymlink, EEXIST, 1, ErrorKind::kMount, kRoot + "/tmp" + kNotRun, "symlink"},
    {ChildStage::kMask, EPERM, 0, ErrorKind::kMount, kRoot + "/work (from /host/project)" + kNotRun, "mask mount"},
    {ChildStage::kDevpts, EPERM, -1, ErrorKind::kMount, kRoot + "the new root" + kNotRun, "devpts mount"},
    {ChildStage::kSeal, EPERM, 1, ErrorKind::kMount, kRoot + "/tmp" + kNotRun, "read-only remount"},
    {ChildStage::kPivot, EINVAL, -1, ErrorKind::kMount, kRoot + "the new root" + kNotRun, "pivot_root"},
    {ChildStage::kProc, EPERM, -1, ErrorKind::kMount,
     "mount view: cannot mount a fresh /proc (inside a container this usually means the outer /proc is partly "
     "masked)" + kNotRun +
         ". Fix: Docker --security-opt systempaths=unconfined, Kubernetes securityContext.procMount: Unmasked; "
         "--best-effort runs it on the masked-proc rung, an empty read-only /proc (docs/hosts.md), as does "
         "--accept-rung masked-proc for that rung alone",
     "proc mount"},
    {ChildStage::kOpenSource, ENOENT, 0, ErrorKind::kPolicy,
     "policy: /work (from /host/project) was removed after the policy was built" + kNotRun,
     "opening a granted path"},
    {ChildStage::kOpenSource, ENOTDIR, 0, ErrorKind::kPolicy,
     "policy: /work (from /host/project) was removed after the policy was built" + kNotRun,
     "opening a granted path"},
    {ChildStage::kOpenSource, ELOOP, 0, ErrorKind::kPolicy,
     "policy: /work (from /host/project) now goes through a symlink" + kNotRun, "opening a granted path"},
    {ChildStage::kOpenSource, EACCES, 0, ErrorKind::kPolicy,
     "policy: /work (from /host/project) can no longer be opened" + kNotRun, "opening a granted path"},
    {ChildStage::kPinChanged, 0, 0, ErrorKind::kPolicy,
     "policy: /work (from /host/project) changed between the check and the spawn (another file is there now); the "
     "command was not run",
     ""},
    {ChildStage::kMaskMoved, 0, 0, ErrorKind::kPolicy,
     "forbid_read: /work (from /host/project) moved after corral found it (the path to hide is gone or another "
     "file is there now); the command was not run",
     ""},
    {ChildStage::kSetsid, EPERM, -1, ErrorKind::kHardening, "hardening: setsid failed" + kNotRun, "setsid"},
    {ChildStage::kRlimit, EPERM, -1, ErrorKind::kHardening, "hardening: rlimits failed" + kNotRun, "rlimits"},
    {ChildStage::kCaps, EPERM, -1, ErrorKind::kHardening, "hardening: dropping capabilities failed" + kNotRun,
     "dropping capabilities"},
    {ChildStage::kNoNewPrivs, EINVAL, -1, ErrorKind::kHardening, "hardening: no_new_privs failed" + kNotRun,
     "no_new_privs"},
    {ChildStage::kSignals, EINVAL, -1, ErrorKind::kHardening, "hardening: signals failed" + kNotRun, "signals"},
    {ChildStage::kLifeline, EINVAL, -1, ErrorKind::kHardening, "hardening: lifeline failed" + kNotRun, "lifeline"},
    {ChildStage::kDumpable, EINVAL, -1, ErrorKind::kHardening, "hardening: non-dumpable init failed" + kNotRun,
     "non-dumpable init"},
    {ChildStage::kLandlock, EPERM, -1, ErrorKind::kLandlock,
     "landlock: the kernel refused the ruleset; the command was not run (a Linux security module or an enclosing "
     "sandbox may forbid it: see `corral check`)",
     "landlock"},
    {ChildStage::kLandlock, EINVAL, 0, ErrorKind::kLandlock,
     "landlock: the kernel refused the ruleset for /work (from /host/project); the command was not run (a Linux "
     "security module or an enclosing sandbox may forbid it: see `corral check`)",
     "landlock"},
    {ChildStage::kSeccomp, EINVAL, -1, ErrorKind::kSeccomp,
     "seccomp: the kernel refused the filter; the command was not run (see `corral check`)", "seccomp"},
    {ChildStage::kInitSeccomp, EINVAL, -1, ErrorKind::kSeccomp,
     "seccomp: the kernel refused the filter; the command was not run (see `corral check`)",
     "init's seccomp filter"},
    {ChildStage::kChdir, ENOENT, -1, ErrorKind::kInternal, "cannot enter a working directory inside the sandbox",
     "working directory"},
    {ChildStage::kFork, EAGAIN, -1, ErrorKind::kInternal, "cannot fork the command inside the sandbox", "fork"},
    {ChildStage::kTerminal, ENOSPC, -1, ErrorKind::kInternal,
     "cannot give the command a pty of its own (stdin and stdout are a terminal); the command was not run. With "
     "stdin or stdout a file or a pipe the command runs without one",
     "the command's pty"},
    {ChildStage::kLoopback, EPERM, -1, ErrorKind::kNamespace,
     "network namespace: cannot bring up lo, the sandbox's own loopback (--network none)" + kNotRun,
     "bringing up lo in the sandbox's network namespace"},
    {ChildStage::kServiceSockets, EADDRINUSE, -1, ErrorKind::kNamespace,
     "network namespace: cannot bind corral's services on the sandbox's 127.0.0.1 (the name server on port 53, the "
     "proxy of --allow-host on 3128 and 1080)" + kNotRun,
     "the sockets of corral's services on the sandbox's 127.0.0.1"},
    {ChildStage::kOverlay, EINVAL, -1, ErrorKind::kUnsupported,
     "--overlay: the kernel refused the workspace's overlay at the new root (unprivileged overlayfs needs Linux "
     "5.11 or later, and the state directory's filesystem must support user extended attributes and whiteouts: "
     "ext4, xfs, btrfs, tmpfs 6.6+); the command was not run",
     "the workspace's overlay (overlayfs in the sandbox's user namespace)"},
    {ChildStage::kStdio, EACCES, -1, ErrorKind::kInternal,
     "cannot open the sandbox's own /dev/null (or zero, full, random, urandom) for the command's stdin, stdout or "
     "stderr, which is that device",
     "stdio devices from the view"},
    {ChildStage::kExec, ENOENT, -1, ErrorKind::kNotFound, "not found inside the sandbox", ""},
    {ChildStage::kExec, EACCES, -1, ErrorKind::kExec, "cannot execute the command inside the sandbox", "exec"},
    {ChildStage::kNone, 0, -1, ErrorKind::kInternal, "the sandbox child failed at an unknown stage", "none"},
    {static_cast<ChildStage>(999), EIO, -1, ErrorKind::kInternal, "the sandbox child failed at an unknown stage",
     "unknown"},
};

// A clone that failed for want of a descriptor or a process is the
// caller's limit, not a refusal of namespaces: it is not kNamespace, which
// a best-effort run would answer with the weaker no-userns rung.
TEST(CloneRefused, OnlyARefusalOfNamespacesIsANamespaceError) {
  const HostSupport host;
  for (int limit : {EMFILE, ENFILE}) {
    Error error = CloneRefused(limit, host);
    EXPECT_EQ(error.kind(), ErrorKind::kIo) << error.ToString();
    EXPECT_NE(error.message().find("ulimit -n"), std::string::npos) << error.ToString();
  }
  Error processes = CloneRefused(EAGAIN, host);
  EXPECT_EQ(processes.kind(), ErrorKind::kIo) << processes.ToString();
  EXPECT_NE(processes.message().find("ulimit -u"), std::string::npos) << processes.ToString();
  for (int refused : {EPERM, ENOSPC, EINVAL}) {
    Error error = CloneRefused(refused, host);
    EXPECT_EQ(error.kind(), ErrorKind::kNamespace) << error.ToString();
    EXPECT_NE(error.message().find("no-userns rung"), std::string::npos) << error.ToString();
  }
}

TEST(TranslateReport, EachStageBecomesItsError) {
  MountPlan mounts = TwoMounts();
  for (const Row& row : kRows) {
    ChildReport report;
    report.stage = row.stage;
    report.error = row.error;
    report.index = row.index;
    Error error = TranslateReport(mounts, report);
    std::string label = std::string(ChildStageName(row.stage)) + " errno " + std::to_string(row.error);
    EXPECT_EQ(ErrorKindName(error.kind()), ErrorKindName(row.kind)) << label;
    EXPECT_EQ(error.message(), row.message) << label;
    EXPECT_EQ(error.syscall(), row.syscall) << label;
    EXPECT_EQ(error.error_number(), row.syscall.empty() ? 0 : row.error) << label;
    // Only the refused /proc lets --best-effort retry on the masked-proc rung.
    EXPECT_EQ(ProcMountRefused(error), row.stage == ChildStage::kProc) << label;
  }
}

// A uid map refused inside a namespace that was created is AppArmor's
// restriction (or a host like it): the error names the sysctl and the fix.
TEST(TranslateReport, AUidMapRefusedNamesAppArmorsSysctlAndTheFix) {
  MountPlan mounts = TwoMounts();
  for (int error_number : {EPERM, EACCES}) {
    ChildReport report;
    report.stage = ChildStage::kUserns;
    report.error = error_number;
    Error error = TranslateReport(mounts, report);
    EXPECT_EQ(error.kind(), ErrorKind::kNamespace);
    for (const char* part : {"no capabilities inside it", "kernel.apparmor_restrict_unprivileged_userns=1",
                             "sudo corral setup apparmor --install", "no-userns rung", "the command was not run"}) {
      EXPECT_NE(error.message().find(part), std::string::npos) << part << " in " << error.message();
    }
  }
}

// A stage added to the report without a row here fails.
TEST(TranslateReport, TheTableNamesEveryStage) {
  std::set<uint32_t> covered;
  for (const Row& row : kRows) covered.insert(static_cast<uint32_t>(row.stage));
  for (uint32_t stage = 0; stage <= static_cast<uint32_t>(ChildStage::kStdio); ++stage) {
    EXPECT_TRUE(covered.count(stage)) << "no row for stage " << ChildStageName(static_cast<ChildStage>(stage));
  }
  EXPECT_STREQ(ChildStageName(static_cast<ChildStage>(static_cast<uint32_t>(ChildStage::kStdio) + 1)), "unknown")
      << "a stage after kStdio: extend the table and this bound";
}

}  // namespace
}  // namespace corral
