#include "executor/process.h"

#include <fcntl.h>
#include <signal.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>

#include "executor/set_state.h"
#include "run/run.h"

namespace corral::executor {
namespace {

// The modes a terminal starts in (`stty sane`): canonical input with echo,
// ^C/^\ /^Z raise their signals, output NL -> CRNL, 8-bit UTF-8.
struct termios SaneModes() {
  struct termios modes = {};
  modes.c_iflag = ICRNL | IXON | IUTF8 | BRKINT | IMAXBEL;
  modes.c_oflag = OPOST | ONLCR;
  modes.c_cflag = CS8 | CREAD | HUPCL;
  modes.c_lflag = ISIG | ICANON | ECHO | ECHOE | ECHOK | IEXTEN | ECHOCTL | ECHOKE;
  modes.c_cc[VINTR] = 003;
  modes.c_cc[VQUIT] = 034;
  modes.c_cc[VERASE] = 0177;
  modes.c_cc[VKILL] = 025;
  modes.c_cc[VEOF] = 004;
  modes.c_cc[VSTART] = 021;
  modes.c_cc[VSTOP] = 023;
  modes.c_cc[VSUSP] = 032;
  modes.c_cc[VREPRINT] = 022;
  modes.c_cc[VWERASE] = 027;
  modes.c_cc[VLNEXT] = 026;
  modes.c_cc[VMIN] = 1;
  modes.c_cc[VTIME] = 0;
  ::cfsetispeed(&modes, B38400);
  ::cfsetospeed(&modes, B38400);
  return modes;
}

Result<std::pair<UniqueFd, UniqueFd>> Pipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return Error::FromErrno(ErrorKind::kInternal, "cannot create a pipe", "pipe2", errno);
  return std::make_pair(UniqueFd(fds[0]), UniqueFd(fds[1]));
}

}  // namespace

Process::~Process() { Close(); }

Result<void> Process::Usable() const {
  if (closed_) return ExecutorError(ExecutorErrc::kInvalidArgument, "the process was closed");
  if (!started_) return ExecutorError(ExecutorErrc::kNotStarted, "the process was not started");
  return {};
}

Result<void> Process::Start() {
  {
    std::lock_guard lock(mutex_);
    if (closed_) return ExecutorError(ExecutorErrc::kInvalidArgument, "the process was closed");
    if (started_) return ExecutorError(ExecutorErrc::kAlreadyStarted, "the process was started already");
    started_ = true;
  }
  auto finish_early = [this](Error error) -> Result<void> {
    std::lock_guard lock(mutex_);
    done_ = true;
    exit_ = ProcessExit{};
    exit_->error = error;
    changed_.notify_all();
    return error;
  };
  Executor::State& state = *executor_->state_;
  Result<void> entered =
      TrackedCall::EnterBoth(set_->tracker, state.tracker, &call_,
                             ExecutorError(ExecutorErrc::kSetClosed, "the executor set was closed; nothing runs"),
                             ExecutorError(ExecutorErrc::kExecutorClosed,
                                           "the executor \"" + executor_->key() + "\" was closed; nothing runs"));
  if (!entered.ok()) return finish_early(entered.error());
  auto leave = [this, &state] {
    call_.MarkFinished();
    state.tracker.Leave(&call_);
    set_->tracker.Leave(&call_);
  };
  Result<gate::AdmittedRun> admitted = executor_->Admit(options_.dir, options_.argv);
  if (!admitted.ok()) {
    leave();
    return finish_early(admitted.error());
  }
  RunOptions run_options = executor_->BaseRunOptions();
  for (const auto& [name, value] : options_.env) {
    run_options.env_set.insert(run_options.env_set.begin(), name + "=" + value);  // HOME, TMPDIR stay last
  }
  // The descriptors the command gets; the run's thread closes them when the run is over.
  std::vector<UniqueFd> child_ends;
  auto fail = [&](Error error) {
    leave();
    return finish_early(std::move(error));
  };
  if (options_.tty == Tty::kYes) {
    // The sandbox's init puts the pty's slave on descriptors 0-2 (this
    // process's, until then) for the command; a descriptor given here would
    // replace it.
    CommandPty pty;
    pty.descriptors = 0b111;
    pty.modes = SaneModes();
    pty.size.ws_row = options_.rows;
    pty.size.ws_col = options_.columns;
    run_options.pty = pty;
  } else {
    Result<std::pair<UniqueFd, UniqueFd>> in = Pipe();
    if (!in.ok()) return fail(in.error());
    Result<std::pair<UniqueFd, UniqueFd>> out = Pipe();
    if (!out.ok()) return fail(out.error());
    Result<std::pair<UniqueFd, UniqueFd>> err = Pipe();
    if (!err.ok()) return fail(err.error());
    run_options.stdin_fd = in->first.get();
    run_options.stdout_fd = out->second.get();
    run_options.stderr_fd = err->second.get();
    stdin_ = std::move(in->second);
    stdout_ = std::move(out->first);
    stderr_ = std::move(err->first);
    child_ends.push_back(std::move(in->first));
    child_ends.push_back(std::move(out->second));
    child_ends.push_back(std::move(err->second));
  }
  run_options.watcher = &call_;
  // The executor's warm sandbox, unless a pty (tty_unsupported) or another
  // call holds it (warm_busy): then this process runs cold.
  std::shared_ptr<WarmSandbox> warm;
  if (options_.tty == Tty::kNo) warm = state.warm.For(admitted->policy());
  run_options.warm = warm.get();
  runner_ = std::thread([this, leave, &state, warm, run = std::move(admitted).value(), run_options,
                         ends = std::move(child_ends)]() mutable {
    RunResult result = RunConfined(std::move(run), run_options);
    state.warm.After(warm, result.cold_because);
    ends.clear();  // every process of the sandbox is gone: EOF follows
    ProcessExit exit;
    if (result.source == RunResult::Source::kCorral && result.error) {
      exit.error = RunError(result);
      exit.exit_code = result.exit_status;
    } else {
      CommandEnd end = CommandEndOf(result);
      exit.exit_code = end.exit_code;
      exit.signal = end.signal;
      exit.protected_left = std::move(end.protected_left);
    }
    leave();
    std::lock_guard lock(mutex_);
    exit.ended_by = call_.ended_by() != EndedBy::kCommand ? call_.ended_by()
                    : terminate_requested_               ? terminate_reason_
                                                         : EndedBy::kCommand;
    if (exit.ended_by == EndedBy::kDeadline || exit.ended_by == EndedBy::kCancelled || exit.ended_by == EndedBy::kSignal) {
      // corral's kill took init: the supervisor saw no status of the command's.
      if (!exit.signal && exit.error && call_.ended_by() != EndedBy::kCommand) {
        exit.error.reset();
        exit.signal = SIGKILL;
        exit.exit_code = 128 + SIGKILL;
      }
    }
    exit_ = std::move(exit);
    done_ = true;
    changed_.notify_all();
  });
  if (!call_.WaitStarted()) {
    runner_.join();
    std::lock_guard lock(mutex_);
    Error error = exit_ && exit_->error ? *exit_->error : ExecutorError(ExecutorErrc::kInternal, "the process did not start");
    if (options_.tty == Tty::kYes && error.message().find("pty") != std::string::npos) {
      error = Reclassify(ExecutorErrc::kTtyUnsupported, error);
    }
    return error;
  }
  if (options_.tty == Tty::kYes) {
    pty_ = call_.TakePtyMaster();
    if (!pty_) {
      call_.Kill(EndedBy::kCancelled);
      return ExecutorError(ExecutorErrc::kTtyUnsupported, "the sandbox gave the command no pty; it was killed");
    }
  }
  watchdog_ = std::thread([this] { Watch(); });
  return {};
}

void Process::Watch() {
  using Clock = std::chrono::steady_clock;
  std::optional<Clock::time_point> deadline;
  if (options_.deadline) deadline = Clock::now() + *options_.deadline;
  std::optional<Clock::time_point> kill_at;
  std::unique_lock lock(mutex_);
  while (!done_) {
    if (terminate_requested_ && !kill_at) {
      kill_at = Clock::now() + options_.terminate_grace;
      lock.unlock();
      (void)call_.Send(SIGTERM);
      lock.lock();
      continue;
    }
    std::optional<Clock::time_point> next = kill_at ? kill_at : deadline;
    if (next) {
      changed_.wait_until(lock, *next);
    } else {
      changed_.wait(lock);
    }
    if (done_) break;
    Clock::time_point now = Clock::now();
    if (kill_at && now >= *kill_at) {
      EndedBy reason = terminate_reason_;
      lock.unlock();
      call_.Kill(reason);
      lock.lock();
      changed_.wait(lock, [this] { return done_; });
      break;
    }
    if (!terminate_requested_ && deadline && now >= *deadline) {
      terminate_requested_ = true;
      terminate_reason_ = EndedBy::kDeadline;
    }
  }
}

Result<int> Process::Stdin() const {
  std::lock_guard lock(mutex_);
  CORRAL_TRY(Usable());
  if (options_.tty == Tty::kYes) return ExecutorError(ExecutorErrc::kStdinClosed, "a TTY process has one stream: Pty()");
  if (stdin_closed_) return ExecutorError(ExecutorErrc::kStdinClosed, "the process's stdin was closed");
  return stdin_.get();
}

Result<int> Process::Stdout() const {
  std::lock_guard lock(mutex_);
  CORRAL_TRY(Usable());
  if (options_.tty == Tty::kYes) return ExecutorError(ExecutorErrc::kInvalidArgument, "a TTY process has one stream: Pty()");
  return stdout_.get();
}

Result<int> Process::Stderr() const {
  std::lock_guard lock(mutex_);
  CORRAL_TRY(Usable());
  if (options_.tty == Tty::kYes) return ExecutorError(ExecutorErrc::kInvalidArgument, "a TTY process has one stream: Pty()");
  return stderr_.get();
}

Result<int> Process::Pty() const {
  std::lock_guard lock(mutex_);
  CORRAL_TRY(Usable());
  if (options_.tty != Tty::kYes) return ExecutorError(ExecutorErrc::kTtyUnsupported, "the process was prepared without a TTY");
  return pty_.get();
}

Result<void> Process::CloseStdin() {
  std::lock_guard lock(mutex_);
  CORRAL_TRY(Usable());
  if (options_.tty == Tty::kYes || stdin_closed_) {
    return ExecutorError(ExecutorErrc::kStdinClosed, "the process's stdin was closed");
  }
  stdin_closed_ = true;
  stdin_.Reset();
  return {};
}

Result<void> Process::Resize(unsigned short rows, unsigned short columns) {
  std::lock_guard lock(mutex_);
  CORRAL_TRY(Usable());
  if (options_.tty != Tty::kYes) return ExecutorError(ExecutorErrc::kTtyUnsupported, "the process was prepared without a TTY");
  struct winsize size = {};
  size.ws_row = rows;
  size.ws_col = columns;
  if (::ioctl(pty_.get(), TIOCSWINSZ, &size) != 0) {
    return Error::FromErrno(ErrorKind::kInternal, "cannot resize the pty", "ioctl", errno);
  }
  return {};
}

Result<void> Process::Signal(ProcessSignal signal) {
  {
    std::lock_guard lock(mutex_);
    CORRAL_TRY(Usable());
    if (done_) return {};
    if (signal == ProcessSignal::kTerminate) {
      if (!terminate_requested_) {
        terminate_requested_ = true;
        terminate_reason_ = EndedBy::kSignal;
      }
      changed_.notify_all();
      return {};
    }
  }
  if (signal == ProcessSignal::kKill) {
    call_.Kill(EndedBy::kSignal);
    return {};
  }
  return call_.Send(SIGINT);
}

Result<ProcessExit> Process::Wait() {
  std::unique_lock lock(mutex_);
  CORRAL_TRY(Usable());
  changed_.wait(lock, [this] { return done_; });
  if (!waited_) {
    waited_ = true;
    lock.unlock();
    JoinThreads();
    lock.lock();
  }
  return *exit_;
}

void Process::JoinThreads() {
  std::lock_guard join(join_mutex_);
  if (runner_.joinable()) runner_.join();
  changed_.notify_all();
  if (watchdog_.joinable()) watchdog_.join();
}

void Process::Close() {
  bool running = false;
  {
    std::lock_guard lock(mutex_);
    if (closed_) return;
    closed_ = true;
    running = started_ && !done_;
  }
  if (running) call_.Kill(EndedBy::kCancelled);
  JoinThreads();
  std::lock_guard lock(mutex_);
  stdin_.Reset();
  stdout_.Reset();
  stderr_.Reset();
  pty_.Reset();
}

}  // namespace corral::executor
