// The caller's terminal, saved before a run and put back after it.
//
// In an interactive run (stdin and stdout a terminal) the command gets a pty
// of its own (exec/pty_relay.h) and this restores the raw mode the relay
// set. Otherwise a command may share the caller's terminal through
// descriptors 0-2, and what it sets there outlives it: `stty -echo` leaves echo off in the
// user's shell, tcflow(TCOOFF) stops all output. The seccomp filter denies
// the settings with no business in a sandbox (the line discipline, exclusive
// mode: kernel/seccomp.h); the rest cannot be denied, shells and editors
// need them, so corral puts them back once every process of the sandbox is
// gone:
//
//   TerminalState terminal = TerminalState::Save();   // before the spawn
//   ... supervise ...
//   terminal.Restore();                               // after the last exit
//
// Restored, for each distinct terminal among descriptors 0-2: termios (modes,
// control characters, speeds), the line discipline (TIOCSETD), exclusive
// mode (TIOCEXCL/TIOCNXCL) and output flow (tcflow(TCOON); output stopped by
// the user before the run is restarted too, as nothing can read that state).
// Not restored: the window size (the user may resize during the run) and
// what the command wrote (a terminal's own modes switched by escape
// sequences, such as the alternate screen, are the terminal emulator's, out
// of corral's reach).
#pragma once

#include <sys/types.h>
#include <termios.h>

#include <vector>

namespace corral {

class TerminalState {
 public:
  // Saves every terminal among descriptors 0-2 (none: nothing to restore).
  static TerminalState Save();
  // Puts back what Save saw, with SIGTTOU blocked so that a corral in a
  // background job still restores. Best effort per setting: a terminal that
  // went away (hung up) is skipped.
  void Restore() const;

 private:
  struct Saved {
    int fd;
    struct termios modes;
    int line_discipline;
    int exclusive;
  };
  std::vector<Saved> saved_;
};

}  // namespace corral
