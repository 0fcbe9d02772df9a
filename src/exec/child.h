// The child side of a spawn: everything that runs between clone and exec,
// and the sandbox's init (PID 1) with its wait loop. The parent side
// (exec/spawn.cc) fills a ChildContext from the Plan and the Command, then
// clones into RunSandboxed (a confined run) or UnconfinedMain
// (danger-full-access).
//
// Rules for every function here:
//   - Only async-signal-safe calls, and no allocation: every array, string,
//     sorted descriptor list and BPF program is prepared by the parent. The
//     children of a multi-threaded caller may run while another thread held
//     the allocator's lock.
//   - One errno convention: a step returns 0 on success or a positive errno,
//     never -1, -errno or a descriptor (one it creates comes back through a
//     pointer parameter). The step's caller names the failing stage; a step
//     that spans several stages (the mount walk) names it, and the mount op's
//     index, in the ChildReport it fills.
//   - A failure ends the child through ChildFail: one fixed-size ChildReport
//     (kernel/child_report.h) written to the CLOEXEC report pipe, then
//     _exit(kChildFailureExit). EOF on that pipe without a report means the
//     command was exec'd. The parent turns a report into an Error
//     (TranslateReport in exec/spawn.h).
//
// The lifeline: init sets PR_SET_PDEATHSIG, closes its copy of corral's end
// of a socketpair and waits for corral's start byte there, which corral
// sends once the clone returned (and the nursery's helper, which shares
// corral's descriptor table, is reaped). After it corral alone holds that
// end, so a hang-up seen then means corral died before PR_SET_PDEATHSIG
// held, and init leaves; a corral that dies later kills init. Without a
// start byte (EOF) init leaves too.
//
// Order in the sandbox's init: lifeline -> descriptors closed -> id maps ->
// hostname (both already set when the nursery made the namespaces,
// exec/nursery.h) -> lo up and the name server's sockets passed out (in a network
// namespace of its own) -> mount view
// (+ Landlock rules) -> the command's pty -> setsid -> RLIMIT_CORE=0 ->
// capabilities dropped -> no_new_privs -> Landlock -> working directory ->
// seccomp -> the go from corral (under --allow-host or --allow-local: once
// its egress proxy serves what was passed out) -> non-dumpable -> signals ->
// clone of the command (which sets its rlimits, then execs) -> init's own
// allowlist filter (kernel/seccomp.h) -> wait loop. A warm sandbox's init
// (SpawnMode::kWarm) stops after no_new_privs: it keeps the Landlock
// ruleset unenforced, installs the command's filter on itself (each call
// inherits it), and serves calls (RunWarmInit in child.cc). The command's clone
// shares init's memory until it execs (CLONE_VM | CLONE_VFORK). With a pty
// the command leads a session of its own with the pty as its controlling
// terminal (a shell gets job control); without one it leads a process group
// in init's session.
#pragma once

#include <linux/filter.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/types.h>
#include <termios.h>

#include <cstddef>
#include <cstdint>

#include "kernel/child_report.h"
#include "kernel/landlock.h"
#include "kernel/loopback.h"
#include "kernel/mounts.h"
#include "kernel/namespaces.h"
#include "kernel/rlimits.h"

namespace corral {

// The signals init forwards to the command's process group.
inline constexpr int kForwardedSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

// The exit status of a child that failed before exec.
inline constexpr int kChildFailureExit = 125;

// Everything the children read. Built in the parent; init gets a copy of it,
// and the command shares init's copy until it execs.
struct ChildContext {
  // From the plan (unused for an unconfined spawn).
  bool namespaces = false;                  // user, mount, PID, ... namespaces were created
  bool identity_set = false;                // the nursery (exec/nursery.h) wrote the id maps and the hostname
  const IdMaps* id_maps = nullptr;
  Loopback loopback = Loopback::kLeave;     // kBringUp: lo of the new network namespace
  const LandlockRights* landlock = nullptr;  // null: Landlock off
  uint64_t root_landlock = 0;
  MountOp* ops = nullptr;                   // the child records the fds it opens here
  size_t op_count = 0;
  sock_fprog filter = {};                   // the command's; len 0: seccomp off
  sock_fprog init_filter = {};              // init's allowlist; len 0: off
  const char* fallback_cwd = "/";
  bool probe_only = false;                  // set everything up, then _exit(0)
  const RlimitSet* rlimits = nullptr;       // the command's (kernel/rlimits.h), set in its process before exec
  // Tests only (a CORRAL_HOST_SIMULATION build, CORRAL_TEST_USERNS_WITHOUT_CAPS=1):
  // the child empties its capability sets as soon as its user namespace
  // exists, as AppArmor's kernel.apparmor_restrict_unprivileged_userns does
  // to an unconfined program; the kernel then refuses what follows.
  bool userns_without_caps = false;
  // The command.
  char* const* argv = nullptr;
  char* const* envp = nullptr;
  const char* cwd = nullptr;
  const char* path_env = nullptr;
  int program_fd = -1;
  int stdin_fd = -1;
  int stdout_fd = -1;
  int stderr_fd = -1;
  // Channels to corral.
  int report_fd = -1;
  int status_fd = -1;     // init writes the command's wait status here
  int lifeline_fd = -1;        // init's end of the lifeline
  int lifeline_write_fd = -1;  // corral's end, which init's copy of the table holds too: closed first
  // The command's own pty (exec/pty_relay.h), when pty_socket_fd >= 0: the
  // child opens it at /dev/ptmx (inside a mount view, the sandbox's private
  // devpts instance), gives the slave the caller's modes and window size,
  // sends the master to corral over this socket, and puts the slave on each
  // descriptor 0-2 whose bit is set in pty_descriptors.
  int pty_socket_fd = -1;
  unsigned pty_descriptors = 0;
  struct termios pty_modes = {};
  struct winsize pty_size = {};
  // corral's services on the sandbox's lo, when services_socket_fd >= 0: the
  // child binds their sockets on 127.0.0.1 of the new network namespace
  // (kernel/loopback.h: the name server's UDP and TCP, then the proxy's
  // listeners and the local ports `services` names) and sends them, in that
  // order, to corral over this socket.
  int services_socket_fd = -1;
  SandboxServices services;
  // A warm sandbox's init (SpawnMode::kWarm, exec/warm_protocol.h), when
  // warm_control_fd >= 0: the control channel it serves calls on, and the
  // buffers the parent allocated for a call's strings (kWarmPayloadMax + 1
  // bytes, kWarmStringSlots pointers).
  int warm_control_fd = -1;
  char* warm_payload = nullptr;
  char** warm_strings = nullptr;
  int keep_fds[10] = {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1};  // what init keeps open, sorted ascending by the parent
  char* command_stack = nullptr;       // top of the stack the command's clone runs on
  sigset_t original_mask = {};
  mode_t umask = 022;
};

// A confined spawn's first clone: sets up the sandbox, then becomes its init.
[[noreturn]] void RunSandboxed(const ChildContext& ctx);

// clone(2) entry of an unconfined spawn (its own session, nothing else);
// `arg` is the ChildContext.
int UnconfinedMain(void* arg);

}  // namespace corral
