// The executor library's typed errors: one enum a harness branches on.
//
// Every failure of ExecutorSet, Executor and Process (executor/executor.h,
// executor/process.h) is a corral Error (base/result.h) whose code() is the
// name of one ExecutorErrc below, made by ExecutorError. ExecutorErrcOf reads
// the class back from any Error, also one that passed through a wrapper that
// kept only the Error: a refusal of the gate (ErrorKind::kDenied) is
// kRefusedByGate, a sandbox that could not be set up (the host's mechanisms,
// the plan, the spawn) is kSandboxUnavailable, so the classification survives
// whatever layer the error came from.
//
//   Result<RunOutput> out = executor->RunArgv(dir, {"make"});
//   if (!out.ok() && ExecutorErrcOf(out.error()) == ExecutorErrc::kSetClosed) ...
#pragma once

#include <string>
#include <string_view>

#include "base/result.h"

namespace corral::executor {

enum class ExecutorErrc {
  kExecutorLimit,       // For(key) of a new key with max_executors open already
  kSetClosed,           // the ExecutorSet was closed: nothing runs any more
  kExecutorClosed,      // this Executor was closed
  kAlreadyStarted,      // Process::Start a second time
  kNotStarted,          // Wait, Signal or a stream before Start
  kTtyUnsupported,      // a TTY was asked for and no pty can be had (never downgraded)
  kStdinClosed,         // the process's stdin was closed (or it has none: a TTY)
  kSandboxUnavailable,  // the sandbox could not be set up on this host; nothing ran
  kRefusedByGate,       // gate::Admit refused (approval, a Gated grant, the trail)
  kCwdOutsideWorkspace, // the call's directory is not inside the workspace
  kScratchUnsafe,       // the scratch root is a symlink, not ours, or cannot be used
  kInvalidArgument,     // an empty argv, a bad key or variable name, bad options
  kPolicy,              // the policy could not be resolved or built
  kCommandNotFound,     // the program could not be found or executed inside the sandbox
  kDeadline,            // the run passed its deadline (policy timeout) and was killed
  kCancelled,           // the run was cancelled (Close) and its tree killed
  kInternal,            // a bug or an unexpected system failure
};

// "executor_limit", "set_closed", ... (the Error's code()).
std::string_view ExecutorErrcName(ExecutorErrc errc);

// An Error of class `errc`: its ErrorKind follows the class (kUsage for bad
// arguments, kDenied for the gate, kUnsupported for the sandbox, ...).
Error ExecutorError(ExecutorErrc errc, std::string message);

// The class of any Error (see the top of this file); kInternal when none fits.
ExecutorErrc ExecutorErrcOf(const Error& error);

// `error` given the class `errc`, its message kept.
Error Reclassify(ExecutorErrc errc, const Error& error);

}  // namespace corral::executor
