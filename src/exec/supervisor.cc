#include "exec/supervisor.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "base/unique_fd.h"

namespace corral {
namespace {

using Clock = std::chrono::steady_clock;

Outcome ReadOutcome(const SandboxProcess& process) {
  Outcome outcome;
  std::optional<int> status = process.CommandStatus();
  if (!status) return outcome;  // kLost
  if (WIFEXITED(*status)) {
    outcome.kind = Outcome::Kind::kExited;
    outcome.code = WEXITSTATUS(*status);
  } else if (WIFSIGNALED(*status)) {
    outcome.kind = Outcome::Kind::kSignaled;
    outcome.signal = WTERMSIG(*status);
  }
  return outcome;
}

// Copies what is readable now; returns false at end of stream.
bool Pump(const StreamRelay& relay) {
  char buffer[1 << 16];
  for (;;) {
    ssize_t n = ::read(relay.input, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return n < 0 && errno == EAGAIN;
    if (relay.scanner != nullptr) relay.scanner->Feed(std::string_view(buffer, static_cast<size_t>(n)));
    for (ssize_t off = 0; off < n;) {
      ssize_t w = ::write(relay.output, buffer + off, static_cast<size_t>(n - off));
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) break;  // the reader went away; keep draining so the command is not blocked
      off += w;
    }
  }
}

}  // namespace

Result<Outcome> Supervise(SandboxProcess& process, const SuperviseOptions& options) {
  UniqueFd signals;
  if (options.forward_signals) {
    sigset_t set = ForwardedSignals();
    signals.Reset(::signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK));
    if (!signals) return Error::FromErrno(ErrorKind::kInternal, "cannot watch signals", "signalfd", errno);
  }
  std::optional<Clock::time_point> deadline;
  if (options.timeout) deadline = Clock::now() + *options.timeout;

  bool relaying = options.relay.has_value();
  if (relaying) ::fcntl(options.relay->input, F_SETFL, ::fcntl(options.relay->input, F_GETFL) | O_NONBLOCK);
  for (;;) {
    struct pollfd fds[3] = {{process.pidfd(), POLLIN, 0},
                            {signals.get(), POLLIN, 0},
                            {relaying ? options.relay->input : -1, POLLIN, 0}};
    int wait_ms = -1;
    if (deadline) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - Clock::now()).count();
      wait_ms = left <= 0 ? 0 : static_cast<int>(std::min<long long>(left, 1 << 30));
    }
    int ready = ::poll(fds, 3, wait_ms);
    if (ready < 0) {
      if (errno == EINTR) continue;
      return Error::FromErrno(ErrorKind::kInternal, "cannot wait for the sandbox", "poll", errno);
    }
    if (relaying && fds[2].revents != 0) relaying = Pump(*options.relay);
    if (fds[0].revents != 0) {
      process.Reap();
      if (relaying) Pump(*options.relay);  // the tree is gone: drain what it left
      return ReadOutcome(process);
    }
    if (signals && (fds[1].revents & POLLIN) != 0) {
      struct signalfd_siginfo info;
      while (::read(signals.get(), &info, sizeof info) == static_cast<ssize_t>(sizeof info)) {
        CORRAL_TRY(process.Forward(static_cast<int>(info.ssi_signo)));
      }
      continue;
    }
    if (deadline && Clock::now() >= *deadline) {
      CORRAL_TRY(process.Kill());
      process.Reap();
      Outcome outcome;
      outcome.kind = Outcome::Kind::kTimedOut;
      return outcome;
    }
  }
}

}  // namespace corral
