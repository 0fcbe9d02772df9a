// The caller's terminal relayed to a pty of the command's own, as `ssh -t`
// and `script` do.
//
// When corral's stdin and stdout are terminals (an interactive run, as
// isatty(0) && isatty(1) means to a shell or a REPL), the command gets its own
// pty instead of the caller's terminal (exec/spawn.h CommandPty): the child
// opens it in the sandbox's private devpts instance (/dev/ptmx inside the
// mount view; without one, the host's), makes it the controlling terminal of
// the session the command leads, and sends the master out. corral then copies
// bytes between the caller's terminal, in raw mode, and that master. Only
// stdin a terminal (`corral run -- git log | less`) is not interactive: the
// pager shares the terminal, and a relay reading keys there in raw mode would
// take them from it, so nothing changes then, as with stdin not a terminal.
//
// Why the sandbox's own devpts and not a pty corral opens on the host and
// passes in: the slave's name then resolves inside (`tty`, ttyname(3), and
// programs that reopen their terminal by name work), the command sees no pty
// of the host's, and the instance goes away with the mount namespace.
//
//   std::optional<CommandPty> pty = CommandPtyFor();  // before the spawn
//   command.pty = pty;
//   ... Spawn ...
//   PtyRelay relay(process.pty_master());
//   relay.EnterRawMode();   // TerminalState (saved before) puts it back
//   options.pty = &relay;   // Supervise polls it, passes SIGWINCH on, Finish()es it
//
// Security:
//   - The relay only copies bytes: what the command writes to its pty reaches
//     the caller's terminal unread and unchanged, as the same bytes written
//     to that terminal directly would (escape sequences are the terminal
//     emulator's to obey or not; corral parses none of them).
//   - The command holds no descriptor of the caller's terminal, so no ioctl
//     reaches it: termios, TIOCSTI, the line discipline, flow control and
//     exclusive mode act on the command's own pty only.
//   - corral never blocks on either side. Its own descriptors for the
//     caller's terminal are reopened non-blocking where the terminal allows
//     (so the caller's shell keeps its blocking descriptor), the master is
//     non-blocking, and each direction holds at most kBuffer bytes: when the
//     terminal does not take output the command, not corral, waits, and the
//     deadline still fires.
//   - After the command's tree is gone, Finish passes on what the pty still
//     holds, bounded in bytes and in time, so neither an endless writer that
//     escaped the tree (only possible without a PID namespace) nor a
//     terminal that stopped reading keeps corral from exiting.
#pragma once

#include <poll.h>

#include <optional>
#include <string>

#include "base/unique_fd.h"
#include "exec/spawn.h"

namespace corral {

// The pty to ask for when stdin and stdout are terminals: the caller's
// terminal's modes and window size, and which of descriptors 0-2 are
// terminals (each gets the slave). nullopt otherwise: nothing changes then.
std::optional<CommandPty> CommandPtyFor();

class PtyRelay {
 public:
  static constexpr size_t kBuffer = 1 << 16;
  // Relays `master` (kept by the caller's SandboxProcess) with the caller's
  // terminal: input from descriptor 0, output to descriptor 1.
  explicit PtyRelay(int master);
  PtyRelay(const PtyRelay&) = delete;
  PtyRelay& operator=(const PtyRelay&) = delete;

  // Raw mode on the caller's terminal: every key goes to the command's pty,
  // whose own line discipline echoes, edits and makes ^C a SIGINT for the
  // command's foreground group. Put back by TerminalState::Restore.
  void EnterRawMode() const;
  // The four descriptors to poll (unused entries have fd -1).
  void Fill(struct pollfd fds[4]) const;
  // Copies what the poll said is ready.
  void Handle(const struct pollfd fds[4]);
  // A SIGWINCH: the caller's window size onto the pty (TIOCSWINSZ), which
  // signals the command's foreground group in turn.
  void Resize() const;
  // The command's tree is gone: pass on what is left on the pty, then stop.
  void Finish();
  // Before Finish: the caller's terminal hung up (end of input, which a raw
  // terminal reports only then, or an error either way): nobody is there.
  bool TerminalHungUp() const { return !input_open_ || !output_open_; }

 private:
  void ReadMaster();
  void WriteOutput();
  void ReadInput();
  void WriteMaster();

  int master_ = -1;
  int terminal_ = -1;  // the caller's terminal, for its modes and size
  UniqueFd input_owned_, output_owned_;  // non-blocking reopenings, when the terminal allowed them
  int input_ = -1, output_ = -1;
  std::string to_terminal_, to_master_;
  bool master_open_ = true, input_open_ = true, output_open_ = true;
};

}  // namespace corral
