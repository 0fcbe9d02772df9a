#include "exec/supervisor.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cerrno>
#include <optional>
#include <string>

#include "base/mutant.h"
#include "base/unique_fd.h"

namespace corral {
namespace {

using Clock = std::chrono::steady_clock;

SupervisedExit ReadExit(const SandboxProcess& process) {
  SupervisedExit outcome;
  std::optional<int> status = process.CommandStatus();
  if (!status) return outcome;  // kLost
  if (WIFEXITED(*status)) {
    outcome.kind = SupervisedExit::Kind::kExited;
    outcome.code = WEXITSTATUS(*status);
  } else if (WIFSIGNALED(*status) && MutantActive(Mutant::kExitSignal)) {
    outcome.kind = SupervisedExit::Kind::kExited;
    outcome.code = WTERMSIG(*status);
  } else if (WIFSIGNALED(*status)) {
    outcome.kind = SupervisedExit::Kind::kSignaled;
    outcome.signal = WTERMSIG(*status);
  }
  return outcome;
}

// Relays the command's stream without ever letting a slow reader of
// corral's output stall the supervisor (and with it the deadline): input is
// read into a bounded buffer, and output is written only when poll says it
// can take more. When the buffer is full the command, not corral, waits.
class Relay {
 public:
  explicit Relay(const StreamRelay& relay) : relay_(relay) {
    ::fcntl(relay_.input, F_SETFL, ::fcntl(relay_.input, F_GETFL) | O_NONBLOCK);
  }
  int input_fd() const { return open_ && pending_.size() < kCapacity ? relay_.input : -1; }
  int output_fd() const { return pending_.empty() ? -1 : relay_.output; }

  void Read() {
    char buffer[1 << 16];
    while (open_ && pending_.size() < kCapacity) {
      ssize_t n = ::read(relay_.input, buffer, sizeof buffer);
      if (n < 0 && errno == EINTR) continue;
      if (n == 0 || (n < 0 && errno != EAGAIN)) open_ = false;
      if (n <= 0) return;
      if (relay_.scanner != nullptr) relay_.scanner->Feed(std::string_view(buffer, static_cast<size_t>(n)));
      pending_.append(buffer, static_cast<size_t>(n));
    }
  }
  // One write of at most PIPE_BUF, which a writable pipe takes without blocking.
  void Write() {
    ssize_t n = ::write(relay_.output, pending_.data(), std::min<size_t>(pending_.size(), PIPE_BUF));
    if (n > 0) pending_.erase(0, static_cast<size_t>(n));
    if (n < 0 && errno != EINTR && errno != EAGAIN) pending_.clear();  // the reader went away
  }
  // The tree is gone: pass on what it left. Blocking on the reader is
  // harmless now, but a descendant that escaped the tree (only possible
  // without a PID namespace) may hold the pipe open, so stop at the first
  // empty read instead of waiting for end of stream.
  void Finish() {
    for (;;) {
      size_t before = pending_.size();
      Read();
      bool more = open_ && pending_.size() > before;
      while (!pending_.empty()) {
        ssize_t n = ::write(relay_.output, pending_.data(), pending_.size());
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
          pending_.clear();
          break;
        }
        pending_.erase(0, static_cast<size_t>(n));
      }
      if (!more) return;
    }
  }

 private:
  static constexpr size_t kCapacity = 1 << 20;
  StreamRelay relay_;
  std::string pending_;
  bool open_ = true;
};

}  // namespace

Result<SupervisedExit> Supervise(SandboxProcess& process, const SuperviseOptions& options) {
  UniqueFd signals;
  if (options.forward_signals || options.pty != nullptr) {
    sigset_t set;
    ::sigemptyset(&set);
    if (options.forward_signals) set = ForwardedSignals();
    if (options.pty != nullptr) ::sigaddset(&set, SIGWINCH);
    signals.Reset(::signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK));
    if (!signals) return Error::FromErrno(ErrorKind::kInternal, "cannot watch signals", "signalfd", errno);
  }
  std::optional<Clock::time_point> deadline;
  if (options.timeout && !MutantActive(Mutant::kTimeoutKill)) deadline = Clock::now() + *options.timeout;

  std::optional<Relay> relay;
  if (options.relay) relay.emplace(*options.relay);
  // What the command left behind, passed on once its tree is gone: the
  // pty's output while the terminal is still raw (the pty did the output
  // processing; the relay never blocks, so nothing the command did can stall
  // it), the stderr relay's once the terminal is put back (the command may
  // have stopped that terminal's output).
  auto put_back = [&] {
    if (options.pty != nullptr) options.pty->Finish();
    if (options.terminal != nullptr) options.terminal->Restore();
    if (relay) relay->Finish();
  };
  auto finish = [&] {
    put_back();
    return ReadExit(process);
  };
  // Every forwarded signal asks the run to end. The first is the command's
  // to handle; a second one ends the sandbox whatever the command does with
  // it, so a command that ignores signals or stopped itself cannot keep
  // corral (nor, interactive, the raw terminal).
  int forwarded = 0;
  bool hung_up = false;
  auto end_by = [&](int sig) -> Result<SupervisedExit> {
    CORRAL_TRY(process.Kill());
    process.Reap();
    put_back();
    SupervisedExit outcome;
    outcome.kind = SupervisedExit::Kind::kSignaled;
    outcome.signal = sig;
    return outcome;
  };
  constexpr int kFixed = 5;
  for (;;) {
    // Init's status pipe ends the run as soon as the sandbox is empty; its
    // exit (the pidfd) comes after the kernel has freed the namespaces.
    bool want_status = !process.unconfined() && !process.status_taken();
    constexpr int kPolled = kFixed + 4 + static_cast<int>(DnsStub::kSlots);
    struct pollfd fds[kPolled] = {{process.pidfd(), POLLIN, 0},
                                     {signals.get(), POLLIN, 0},
                                     {relay ? relay->input_fd() : -1, POLLIN, 0},
                                     {relay ? relay->output_fd() : -1, POLLOUT, 0},
                                     {want_status ? process.status_fd() : -1, POLLIN, 0}};
    for (int i = kFixed; i < kPolled; ++i) fds[i] = {-1, 0, 0};
    if (options.pty != nullptr) options.pty->Fill(fds + kFixed);
    if (process.dns() != nullptr) process.dns()->Fill(fds + kFixed + 4);
    int wait_ms = -1;
    if (deadline) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - Clock::now()).count();
      wait_ms = left <= 0 ? 0 : static_cast<int>(std::min<long long>(left, 1 << 30));
    }
    int ready = ::poll(fds, kPolled, wait_ms);
    if (ready < 0) {
      if (errno == EINTR) continue;
      return Error::FromErrno(ErrorKind::kInternal, "cannot wait for the sandbox", "poll", errno);
    }
    if (relay && fds[2].revents != 0) relay->Read();
    if (relay && fds[3].revents != 0) relay->Write();
    if (options.pty != nullptr) options.pty->Handle(fds + kFixed);
    if (process.dns() != nullptr) process.dns()->Handle(fds + kFixed + 4);
    // The caller's terminal hung up (its window closed): the command gets
    // the SIGHUP a terminal of its own would give it, and counts as one
    // signal more, so the window's own SIGHUP to corral ends the sandbox.
    if (options.pty != nullptr && !hung_up && options.pty->TerminalHungUp()) {
      hung_up = true;
      if (++forwarded >= 2 && !MutantActive(Mutant::kRepeatedSignalKill)) return end_by(SIGHUP);
      CORRAL_TRY(process.Forward(SIGHUP));
    }
    if (fds[4].revents != 0) {
      if (process.TakeStatus() && process.emptied()) return finish();
      continue;  // without a PID namespace of its own, or init died: wait for init
    }
    if (fds[0].revents != 0) {
      process.Reap();
      return finish();
    }
    if (signals && (fds[1].revents & POLLIN) != 0) {
      struct signalfd_siginfo info;
      while (::read(signals.get(), &info, sizeof info) == static_cast<ssize_t>(sizeof info)) {
        if (static_cast<int>(info.ssi_signo) == SIGWINCH) {
          if (options.pty != nullptr) options.pty->Resize();
          continue;
        }
        const int sig = static_cast<int>(info.ssi_signo);
        if (++forwarded >= 2 && !MutantActive(Mutant::kRepeatedSignalKill)) return end_by(sig);
        CORRAL_TRY(process.Forward(sig));
      }
      continue;
    }
    if (deadline && Clock::now() >= *deadline) {
      CORRAL_TRY(process.Kill());
      process.Reap();
      SupervisedExit outcome;
      outcome.kind = SupervisedExit::Kind::kTimedOut;
      return outcome;
    }
  }
}

}  // namespace corral
