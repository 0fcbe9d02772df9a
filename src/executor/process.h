// Process: one command of an Executor, driven by hand (pipes or a TTY,
// signals, a deadline), as a harness's interactive tool needs.
//
//   ProcessOptions options{.dir = workspace, .argv = {"python3", "-i"}};
//   auto process = executor->PrepareProcess(std::move(options));
//   (*process)->Start();                 // once: kAlreadyStarted after
//   write((*process)->Stdin().value(), "print(1)\n", 9);
//   ... read((*process)->Stdout().value(), ...) ...
//   (*process)->CloseStdin();
//   Result<ProcessExit> exit = (*process)->Wait();   // one real wait, cached
//
// Start admits the command through the gate (as every executor call) and
// runs RunConfined on a thread of the Process's own, in the executor's warm
// sandbox when it is free and the process has no TTY, else cold (a cold
// sandbox's init holds PR_SET_PDEATHSIG on that thread);
// it returns once the command exists, or with why it could not start
// (kRefusedByGate, kSandboxUnavailable, kTtyUnsupported, ...).
//
// Streams: without a TTY, Stdin() is the write end of the command's stdin
// and Stdout() / Stderr() the read ends of its stdout and stderr (pipes the
// Process owns; the caller reads them, or the command blocks once a pipe is
// full). With tty = kYes the command gets a pty of its own, opened in the
// sandbox's private devpts, as its controlling terminal on descriptors 0-2
// (exec/spawn.h CommandPty): Pty() is its master (read output, write
// input), Resize sets its window size (the command's process group gets
// SIGWINCH), and Stdin/Stdout/Stderr are refused. A TTY that cannot be had
// is kTtyUnsupported, never a silent fall back to pipes.
//
// Signal: kInterrupt and kTerminate go to the command's process group
// (through the cold sandbox's init, or a warm sandbox's channel: run/run.h
// RunControl); kTerminate escalates to killing the command's whole tree
// when it has not ended after terminate_grace; kKill is that kill at once.
// A warm sandbox survives it and takes the next call. The deadline, when set,
// is a kTerminate at that time (ProcessExit::ended_by kDeadline).
//
// Close kills what still runs, waits for the run's thread and closes every
// descriptor; the destructor closes. Every call after Close, and a Start
// after the executor or its set were closed, is the typed error.
#pragma once

#include <sys/ioctl.h>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/result.h"
#include "base/unique_fd.h"
#include "executor/call.h"
#include "executor/executor.h"

namespace corral::executor {

enum class Tty { kNo, kYes };
enum class ProcessSignal { kInterrupt, kTerminate, kKill };

struct ProcessOptions {
  std::string dir;                 // inside the workspace (see executor.h)
  std::vector<std::string> argv;
  // Set in the command's environment after the scrub ("NAME", "value");
  // HOME and TMPDIR are the executor's and cannot be replaced.
  std::vector<std::pair<std::string, std::string>> env;
  Tty tty = Tty::kNo;
  unsigned short rows = 24, columns = 80;  // the pty's first window size
  std::optional<std::chrono::milliseconds> deadline;     // from Start
  std::chrono::milliseconds terminate_grace{2000};
};

struct ProcessExit {
  int exit_code = 0;          // the command's, or 128 + the signal
  std::optional<int> signal;  // the signal that killed the command
  EndedBy ended_by = EndedBy::kCommand;  // kDeadline, kSignal (Signal), kCancelled (Close)
  std::optional<Error> error;  // corral ended the run (a sandbox failure)
  std::vector<std::string> protected_left;  // as RunOutput::protected_left (executor.h)
};

class Process {
 public:
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;
  ~Process();

  Result<void> Start();
  Result<int> Stdin() const;
  Result<int> Stdout() const;
  Result<int> Stderr() const;
  Result<int> Pty() const;
  // Closes the command's stdin (EOF); a second time: kStdinClosed.
  Result<void> CloseStdin();
  Result<void> Resize(unsigned short rows, unsigned short columns);
  Result<void> Signal(ProcessSignal signal);
  Result<ProcessExit> Wait();
  void Close();

 private:
  friend class Executor;
  Process(Executor* executor, std::shared_ptr<SetState> set, ProcessOptions options)
      : executor_(executor), set_(std::move(set)), options_(std::move(options)) {}
  Result<void> Usable() const;
  void Watch();  // the deadline and the terminate grace
  void JoinThreads();

  Executor* executor_;  // owned by *set_, which this keeps alive
  std::shared_ptr<SetState> set_;
  ProcessOptions options_;
  LiveCall call_;
  std::thread runner_;
  std::thread watchdog_;
  UniqueFd stdin_, stdout_, stderr_, pty_;
  std::mutex join_mutex_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  bool started_ = false;
  bool done_ = false;
  bool closed_ = false;
  bool terminate_requested_ = false;
  bool stdin_closed_ = false;
  bool waited_ = false;
  std::optional<ProcessExit> exit_;
  EndedBy terminate_reason_ = EndedBy::kSignal;
};

}  // namespace corral::executor
