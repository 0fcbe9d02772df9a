// ChannelApprover: asks a harness over a socket instead of a person at the
// terminal (`corral run --approval-fd N`, `corral wrap --approval-fd N`).
//
// The harness creates a connected stream socket pair (socketpair(2): Python
// socket.socketpair(), a Node `stdio` 'pipe', Go syscall.Socketpair), passes
// one end to corral as descriptor N and keeps the other. One descriptor
// carries both directions, so there is one thing to pass and one to close.
// Each question is one request line, each answer one line
// (approval_protocol.h); questions are asked one at a time.
//
//   CORRAL_ASSIGN_OR_RETURN(ChannelApprover channel,
//                           ChannelApprover::FromFd(fd, ChannelApprover::kDefaultTimeout));
//   Result<gate::AdmittedRun> run = gate::Admit(std::move(request), channel);
//   channel.Close();  // before anything runs
//
// Security: every failure is a refusal, never an allow: end of input, a
// timeout (kDefaultTimeout unless told otherwise, or the request's own
// deadline when that comes first) and every parse error of
// approval_protocol.h. After one failure the channel answers nothing more:
// each later question fails too (approval_channel_failed), so a harness out
// of step never has its next line taken as an answer. Nothing past the
// answer's newline is read. The descriptor is made close-on-exec at once;
// the caller closes it (Close) once the gate has decided, so the confined
// command never holds it (spawn closes every other descriptor as well).
#pragma once

#include <chrono>
#include <string>

#include "base/result.h"
#include "base/unique_fd.h"
#include "gate/approval.h"

namespace corral {

class ChannelApprover : public Approver {
 public:
  static constexpr std::chrono::seconds kDefaultTimeout{300};
  static constexpr std::chrono::seconds kMaxTimeout{86400};

  // Takes descriptor `fd`, which must be 3 or above (0 to 2 pass into the
  // sandbox), a connected stream socket, and not the socket that 0, 1 or 2
  // is. Errors: ErrorKind::kUsage, code "approval_fd_invalid".
  static Result<ChannelApprover> FromFd(int fd, std::chrono::milliseconds timeout);
  ChannelApprover(UniqueFd fd, std::chrono::milliseconds timeout);

  // Errors: ErrorKind::kDenied with the codes of approval_protocol.h, or
  // "approval_channel_closed" (end of input, a reset or a failed write),
  // "approval_channel_timeout" (no whole answer in time), or
  // "approval_channel_failed" (an earlier question failed, or Close).
  Result<ApprovalAnswer> Request(const ApprovalRequest& request) override;

  std::string Who() const override { return "the approval channel"; }

  // Closes the descriptor now.
  void Close() { fd_.Reset(); }

 private:
  Result<std::string> ReadLine(std::chrono::steady_clock::time_point deadline);
  Status WriteLine(const std::string& line, std::chrono::steady_clock::time_point deadline);

  UniqueFd fd_;
  std::chrono::milliseconds timeout_;
  bool failed_ = false;
};

}  // namespace corral
