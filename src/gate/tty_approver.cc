#include "gate/tty_approver.h"

#include <fcntl.h>
#include <poll.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <optional>

#include "base/mutant.h"
#include "base/terminal.h"
#include "base/unique_fd.h"

namespace corral {
namespace {

constexpr size_t kMaxAnswer = 64;

Error NoTty(std::string message) { return Error(ErrorKind::kDenied, std::move(message)).WithCode("approval_no_tty"); }

Status WriteAll(int fd, std::string_view text) {
  while (!text.empty()) {
    ssize_t wrote = ::write(fd, text.data(), text.size());
    if (wrote < 0) {
      if (errno == EINTR) continue;
      return Error::FromErrno(ErrorKind::kDenied, "writing the approval question", "write", errno)
          .WithCode("approval_tty_closed");
    }
    text.remove_prefix(static_cast<size_t>(wrote));
  }
  return Ok();
}

// One line from the terminal (LF or CR ends it), at most kMaxAnswer bytes
// kept. End of input or a read error (a hang-up gives EIO) is an Error.
Result<std::string> ReadLine(int fd, std::optional<std::chrono::steady_clock::time_point> deadline) {
  std::string line;
  for (;;) {
    if (deadline) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - std::chrono::steady_clock::now());
      struct pollfd entry = {fd, POLLIN, 0};
      int ready = ::poll(&entry, 1, left.count() > 0 ? static_cast<int>(left.count()) : 0);
      if (ready < 0 && errno == EINTR) continue;
      if (ready == 0) {
        return Error(ErrorKind::kDenied, "no answer on the terminal in time").WithCode("approval_tty_timeout");
      }
    }
    char c;
    ssize_t got = ::read(fd, &c, 1);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      return Error::FromErrno(ErrorKind::kDenied, "reading the approval answer", "read", errno)
          .WithCode("approval_tty_closed");
    }
    if (got == 0) {
      return Error(ErrorKind::kDenied, "the terminal closed before an answer").WithCode("approval_tty_closed");
    }
    if (c == '\n' || c == '\r') return line;
    if (line.size() < kMaxAnswer) line += c;
  }
}

std::optional<ApprovalAnswer> ParseAnswer(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  std::string lower;
  for (char c : text) lower += (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  if (lower == "y" || lower == "yes") return ApprovalAnswer::kAllowOnce;
  if (lower == "n" || lower == "no") return ApprovalAnswer::kDeny;
  if (lower == "a" || lower == "always") return ApprovalAnswer::kAllowForRun;
  return std::nullopt;
}

}  // namespace

std::string EscapeForTerminal(std::string_view text) {
  std::string doubled;
  for (char c : text) {
    if (c == '\\') doubled += '\\';
    doubled += c;
  }
  return EscapeControls(doubled);
}

TtyApprover::TtyApprover(std::string tty_path, int max_attempts)
    : tty_path_(std::move(tty_path)), max_attempts_(max_attempts < 1 ? 1 : max_attempts) {}

Result<ApprovalAnswer> TtyApprover::Request(const ApprovalRequest& request) {
  int raw = ::open(tty_path_.c_str(), O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (raw < 0) {
    int err = errno;
    return Error(ErrorKind::kDenied, "cannot ask for approval: no terminal (" + tty_path_ + ")", "open", err)
        .WithCode("approval_no_tty");
  }
  UniqueFd tty(raw);
  if (::isatty(tty.get()) == 0) return NoTty("cannot ask for approval: " + tty_path_ + " is not a terminal");
  // Keys pressed before the question was shown must not answer it.
  if (!MutantActive(Mutant::kApprovalFlush)) ::tcflush(tty.get(), TCIFLUSH);

  std::string question =
      request.kind == QuestionKind::kNetwork
          ? "\ncorral: allow " + EscapeForTerminal(request.summary) + "?\n  why: " +
                EscapeForTerminal(request.rationale) + "\n  [y] this connection  [n] refuse  [a] " +
                EscapeForTerminal(request.class_key) + " for the rest of this run\n> "
          : "\ncorral: approve " + EscapeForTerminal(request.summary) + "?\n  why: " +
                EscapeForTerminal(request.rationale) + "\n  [y] this call  [n] refuse  [a] every " +
                EscapeForTerminal(request.class_key) + " call for the rest of this run\n> ";
  CORRAL_TRY(WriteAll(tty.get(), question));
  for (int attempt = 0; attempt < max_attempts_; ++attempt) {
    CORRAL_ASSIGN_OR_RETURN(std::string line, ReadLine(tty.get(), request.deadline));
    if (std::optional<ApprovalAnswer> answer = ParseAnswer(line)) return *answer;
    if (attempt + 1 < max_attempts_) CORRAL_TRY(WriteAll(tty.get(), "please answer y, n or a\n> "));
  }
  CORRAL_TRY(WriteAll(tty.get(), "no answer; refused\n"));
  return ApprovalAnswer::kDeny;
}

}  // namespace corral
