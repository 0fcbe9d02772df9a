#include "gate/channel_approver.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <cerrno>

#include "base/await_ready.h"
#include "base/hex.h"
#include "base/random.h"
#include "gate/approval_protocol.h"

namespace corral {
namespace {

using Clock = std::chrono::steady_clock;

Error Invalid(int fd, std::string why) {
  return Error(ErrorKind::kUsage, "--approval-fd " + std::to_string(fd) + ": " + std::move(why))
      .WithCode("approval_fd_invalid");
}

Error Closed(std::string what) {
  return Error(ErrorKind::kDenied, "approval channel: " + std::move(what)).WithCode("approval_channel_closed");
}

Error TimedOut(std::chrono::milliseconds timeout) {
  return Error(ErrorKind::kDenied, "approval channel: no answer within " +
                                       std::to_string(timeout.count() / 1000) + " s (--approval-timeout)")
      .WithCode("approval_channel_timeout");
}

}  // namespace

Result<ChannelApprover> ChannelApprover::FromFd(int fd, std::chrono::milliseconds timeout) {
  if (fd < 3) return Invalid(fd, "must be 3 or above (descriptors 0 to 2 pass into the sandbox)");
  struct stat info {};
  if (::fstat(fd, &info) != 0) return Invalid(fd, "is not an open descriptor");
  int type = 0;
  socklen_t size = sizeof type;
  if (!S_ISSOCK(info.st_mode) || ::getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &size) != 0 || type != SOCK_STREAM) {
    return Invalid(fd, "must be a connected stream socket (one end of a socketpair), which carries the "
                       "questions and the answers");
  }
  // The same socket as stdin, stdout or stderr would pass into the sandbox
  // with them, and the command could answer on it.
  for (int stdio = 0; stdio <= 2; ++stdio) {
    struct stat other {};
    if (::fstat(stdio, &other) == 0 && other.st_dev == info.st_dev && other.st_ino == info.st_ino) {
      return Invalid(fd, "is the same socket as descriptor " + std::to_string(stdio) +
                             ", which passes into the sandbox; pass a socket of its own");
    }
  }
  // A listening or never-connected socket has no harness at the other end.
  struct sockaddr_storage peer {};
  socklen_t peer_size = sizeof peer;
  if (::getpeername(fd, reinterpret_cast<struct sockaddr*>(&peer), &peer_size) != 0) {
    return Invalid(fd, "is a stream socket that is not connected (pass one end of a socketpair)");
  }
  if (::fcntl(fd, F_SETFD, FD_CLOEXEC) != 0) return Invalid(fd, "cannot be made close-on-exec");
  return ChannelApprover(UniqueFd(fd), timeout);
}

ChannelApprover::ChannelApprover(UniqueFd fd, std::chrono::milliseconds timeout)
    : fd_(std::move(fd)), timeout_(timeout) {}

Status ChannelApprover::WriteLine(const std::string& line, Clock::time_point deadline) {
  std::string_view rest(line);
  while (!rest.empty()) {
    if (!AwaitReady(fd_.get(), POLLOUT, deadline)) return TimedOut(timeout_);
    ssize_t sent = ::send(fd_.get(), rest.data(), rest.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (sent < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
    if (sent < 0) return Error::FromErrno(ErrorKind::kDenied, "approval channel: writing the question", "send", errno)
                      .WithCode("approval_channel_closed");
    rest.remove_prefix(static_cast<size_t>(sent));
  }
  return Ok();
}

// One byte at a time, so nothing past the answer's '\n' is taken.
Result<std::string> ChannelApprover::ReadLine(Clock::time_point deadline) {
  std::string line;
  for (;;) {
    if (!AwaitReady(fd_.get(), POLLIN, deadline)) return TimedOut(timeout_);
    char c;
    ssize_t got = ::recv(fd_.get(), &c, 1, MSG_DONTWAIT);
    if (got < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
    if (got < 0) return Error::FromErrno(ErrorKind::kDenied, "approval channel: reading the answer", "recv", errno)
                     .WithCode("approval_channel_closed");
    if (got == 0) return Closed(line.empty() ? "closed before an answer" : "closed in the middle of an answer line");
    if (c == '\n') return line;
    if (line.size() >= kMaxAnswerLineBytes) {
      return Error(ErrorKind::kDenied, "approval channel: an answer line longer than " +
                                           std::to_string(kMaxAnswerLineBytes) + " bytes")
          .WithCode("approval_channel_oversize");
    }
    line += c;
  }
}

Result<ApprovalAnswer> ChannelApprover::Request(const ApprovalRequest& request) {
  if (failed_ || !fd_.valid()) {
    return Error(ErrorKind::kDenied, "approval channel: an earlier question on it failed, so it answers no more")
        .WithCode("approval_channel_failed");
  }
  failed_ = true;  // until this question is answered well
  CORRAL_ASSIGN_OR_RETURN(std::string nonce, RandomBytes(12));
  std::string id = HexEncode(nonce);
  Clock::time_point deadline = Clock::now() + timeout_;
  if (request.deadline && *request.deadline < deadline) deadline = *request.deadline;
  CORRAL_TRY(WriteLine(ApprovalRequestLine(request, id) + "\n", deadline));
  CORRAL_ASSIGN_OR_RETURN(std::string line, ReadLine(deadline));
  CORRAL_ASSIGN_OR_RETURN(ApprovalAnswer answer,
                          ParseApprovalAnswer(line, id, request.session_answer, request.run_answer));
  failed_ = false;
  return answer;
}

}  // namespace corral
