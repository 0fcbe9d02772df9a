#include "exec/supervisor.h"

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

  for (;;) {
    struct pollfd fds[2] = {{process.pidfd(), POLLIN, 0}, {signals.get(), POLLIN, 0}};
    int wait_ms = -1;
    if (deadline) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - Clock::now()).count();
      wait_ms = left <= 0 ? 0 : static_cast<int>(std::min<long long>(left, 1 << 30));
    }
    int ready = ::poll(fds, signals ? 2 : 1, wait_ms);
    if (ready < 0) {
      if (errno == EINTR) continue;
      return Error::FromErrno(ErrorKind::kInternal, "cannot wait for the sandbox", "poll", errno);
    }
    if (fds[0].revents != 0) {
      process.Reap();
      return ReadOutcome(process);
    }
    if (signals && (fds[1].revents & POLLIN) != 0) {
      struct signalfd_siginfo info;
      while (::read(signals.get(), &info, sizeof info) == static_cast<ssize_t>(sizeof info)) {
        CORRAL_TRY(process.Signal(static_cast<int>(info.ssi_signo)));
      }
      continue;
    }
    if (ready == 0 && deadline && Clock::now() >= *deadline) {
      CORRAL_TRY(process.Signal(SIGKILL));
      process.Reap();
      Outcome outcome;
      outcome.kind = Outcome::Kind::kTimedOut;
      return outcome;
    }
  }
}

}  // namespace corral
