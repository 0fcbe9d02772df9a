// Supervise: wait for a sandbox, forward signals, enforce the deadline, and
// classify how it ended.
//
// - A forwarded signal (SIGINT, SIGTERM, SIGHUP, SIGQUIT) received by corral
//   goes to the sandbox's init, which passes it to every process inside.
// - At the deadline the init gets SIGKILL; the PID namespace takes the whole
//   tree with it.
// - The result is the command's own exit code, or the signal that killed it;
//   a timeout or a lost init are reported as such, never as a command result.
// - The sandbox's name server (SandboxProcess::dns, net/dns_stub.h), when it
//   has one, answers in the same loop.
// - With a pty relay (exec/pty_relay.h), its bytes are copied both ways in the
//   same loop, SIGWINCH passes the window size on, and once the tree is gone
//   the relay passes on what is left, then the terminal is put back.
#pragma once

#include <chrono>
#include <optional>

#include "base/result.h"
#include "exec/denials.h"
#include "exec/pty_relay.h"
#include "exec/spawn.h"
#include "exec/terminal_state.h"

#include <unistd.h>

namespace corral {

// Relays a pipe (the command's stderr) to `output` while the sandbox runs,
// feeding every chunk to `scanner`.
struct StreamRelay {
  int input = -1;   // the read end; made non-blocking
  int output = STDERR_FILENO;
  DenialScanner* scanner = nullptr;
};

struct SuperviseOptions {
  std::optional<std::chrono::milliseconds> timeout;
  bool forward_signals = true;  // needs BlockForwardedSignals() before Spawn
  std::optional<StreamRelay> relay;
  // The caller's terminal, put back once the tree is gone and before the
  // relay passes on what it left there (a terminal the command stopped
  // would block that write for good).
  const TerminalState* terminal = nullptr;
  // The command's own pty, relayed with the caller's terminal; SIGWINCH must
  // be blocked (BlockForwardedSignals does).
  PtyRelay* pty = nullptr;
};

// How the supervised command ended.
struct SupervisedExit {
  enum class Kind {
    kExited,    // the command exited with `code`
    kSignaled,  // the command was killed by `signal`
    kTimedOut,  // corral killed the tree at the deadline
    kLost,      // the sandbox's init died without reporting (killed from outside)
  };
  Kind kind = Kind::kLost;
  int code = 0;
  int signal = 0;
  // The status corral relays: code, or 128 + signal.
  int ExitStatus() const { return kind == Kind::kSignaled ? 128 + signal : code; }
};

Result<SupervisedExit> Supervise(SandboxProcess& process, const SuperviseOptions& options);

}  // namespace corral
