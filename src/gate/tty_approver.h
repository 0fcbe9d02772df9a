// TtyApprover: asks the person at the controlling terminal.
//
// Each request opens the terminal (by default /dev/tty, O_RDWR | O_NOCTTY |
// O_CLOEXEC), discards anything typed ahead, prints the action, why it is
// asked about, and what "a" would cover, then reads one line:
//   y / yes     allow this call          n / no      refuse it
//   a / always  allow every call of this class for the rest of the run
// Anything else is asked again, up to `max_attempts` times, then refused.
//
//   TtyApprover tty;                       // the real terminal
//   TtyApprover test_tty(ptsname(master)); // a pty in tests
//
// Security: with no terminal (unattended runs, a closed or hung-up tty, a
// path that is not a terminal) Request returns an Error, so the gate denies:
// it never falls back to allowing. Control bytes in the command are shown as
// \xNN, never sent raw: an escape sequence must not be able to redraw the
// question the person is answering.
#pragma once

#include <string>

#include "gate/approval.h"

namespace corral {

class TtyApprover : public Approver {
 public:
  explicit TtyApprover(std::string tty_path = "/dev/tty", int max_attempts = 3);

  // Errors: ErrorKind::kDenied with code "approval_no_tty" (cannot open, or
  // not a terminal) or "approval_tty_closed" (end of input or a read error
  // before an answer).
  // With a deadline in the request, no answer by then is an Error
  // ("approval_tty_timeout").
  Result<ApprovalAnswer> Request(const ApprovalRequest& request) override;
  std::string Who() const override { return "the terminal"; }

 private:
  std::string tty_path_;
  int max_attempts_;
};

// `text` with backslashes doubled and every control (C0, DEL, C1, invalid
// UTF-8) escaped as base/terminal.h's EscapeControls does, so a terminal
// shows exactly what is there.
std::string EscapeForTerminal(std::string_view text);

}  // namespace corral
