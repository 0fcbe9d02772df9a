// The fixed-size record a sandbox child writes to its CLOEXEC report pipe when
// a step between clone and exec fails. The parent turns it into an Error.
#pragma once

#include <cstdint>

namespace corral {

enum class ChildStage : uint32_t {
  kNone = 0,
  kLifeline,      // the parent died before the child was set up
  kUserns,        // writing uid_map / gid_map / setgroups
  kHostname,
  kMountPrivate,  // making / recursively private
  kOpenSource,    // opening a granted path inside the new mount namespace
  kPinChanged,    // a granted path is no longer the pinned (dev, inode)
  kNewRoot,       // the tmpfs that becomes /
  kMkdir,         // creating a mount point
  kBind,
  kTmpfs,
  kSymlink,
  kMask,
  kProc,
  kDevpts,
  kSeal,          // making tmpfs mounts read-only
  kPivot,
  kSetsid,
  kRlimit,
  kCaps,
  kNoNewPrivs,
  kLandlock,
  kSeccomp,
  kChdir,
  kFork,
  kExec,
  kSignals,
  kMaskMoved,     // a path to hide is no longer the (dev, inode) the mask walk saw
  kDumpable,      // making init non-dumpable (PR_SET_DUMPABLE)
  kInitSeccomp,   // init's own allowlist filter
  kTerminal,      // the command's own pty: opened, passed out, made its controlling terminal
  kLoopback,      // bringing up lo in the sandbox's own network namespace
  kServiceSockets,  // binding and passing out the sockets of corral's services (name server, proxy) on 127.0.0.1
  kOverlay,       // the overlay of --overlay: its layers opened, the overlayfs made (kernel/mounts.h)
  kStdio,         // a device of the view given as stdio, opened anew from the view (exec/child.cc)
};

struct ChildReport {
  ChildStage stage = ChildStage::kNone;
  int32_t error = 0;   // errno
  int32_t index = -1;  // which mount op, when the stage has one
  int32_t reserved = 0;
};
static_assert(sizeof(ChildReport) == 16, "the report is written in one write(2)");

const char* ChildStageName(ChildStage stage);

}  // namespace corral
