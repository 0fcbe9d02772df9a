#include "kernel/child_report.h"

namespace corral {

const char* ChildStageName(ChildStage stage) {
  switch (stage) {
    case ChildStage::kNone: return "none";
    case ChildStage::kLifeline: return "lifeline";
    case ChildStage::kUserns: return "user namespace id maps";
    case ChildStage::kHostname: return "hostname";
    case ChildStage::kMountPrivate: return "private mount propagation";
    case ChildStage::kOpenSource: return "opening a granted path";
    case ChildStage::kPinChanged: return "pinned path identity";
    case ChildStage::kNewRoot: return "new root tmpfs";
    case ChildStage::kMkdir: return "mount point";
    case ChildStage::kBind: return "bind mount";
    case ChildStage::kTmpfs: return "tmpfs mount";
    case ChildStage::kSymlink: return "symlink";
    case ChildStage::kMask: return "mask mount";
    case ChildStage::kProc: return "proc mount";
    case ChildStage::kDevpts: return "devpts mount";
    case ChildStage::kSeal: return "read-only remount";
    case ChildStage::kPivot: return "pivot_root";
    case ChildStage::kSetsid: return "setsid";
    case ChildStage::kRlimit: return "rlimits";
    case ChildStage::kCaps: return "dropping capabilities";
    case ChildStage::kNoNewPrivs: return "no_new_privs";
    case ChildStage::kLandlock: return "landlock";
    case ChildStage::kSeccomp: return "seccomp";
    case ChildStage::kChdir: return "working directory";
    case ChildStage::kFork: return "fork";
    case ChildStage::kExec: return "exec";
    case ChildStage::kSignals: return "signals";
    case ChildStage::kMaskMoved: return "masked path identity";
    case ChildStage::kDumpable: return "non-dumpable init";
    case ChildStage::kInitSeccomp: return "init's seccomp filter";
    case ChildStage::kTerminal: return "the command's pty";
    case ChildStage::kLoopback: return "bringing up lo in the sandbox's network namespace";
    case ChildStage::kServiceSockets: return "the sockets of corral's services on the sandbox's 127.0.0.1";
    case ChildStage::kOverlay: return "the workspace's overlay (overlayfs in the sandbox's user namespace)";
    case ChildStage::kStdio: return "stdio devices from the view";
  }
  return "unknown";
}

}  // namespace corral
