#include "executor/errors.h"

#include <array>
#include <utility>

namespace corral::executor {
namespace {

constexpr std::array<std::pair<ExecutorErrc, std::string_view>, 17> kNames = {{
    {ExecutorErrc::kExecutorLimit, "executor_limit"},
    {ExecutorErrc::kSetClosed, "set_closed"},
    {ExecutorErrc::kExecutorClosed, "executor_closed"},
    {ExecutorErrc::kAlreadyStarted, "already_started"},
    {ExecutorErrc::kNotStarted, "not_started"},
    {ExecutorErrc::kTtyUnsupported, "tty_unsupported"},
    {ExecutorErrc::kStdinClosed, "stdin_closed"},
    {ExecutorErrc::kSandboxUnavailable, "sandbox_unavailable"},
    {ExecutorErrc::kRefusedByGate, "refused_by_gate"},
    {ExecutorErrc::kCwdOutsideWorkspace, "cwd_outside_workspace"},
    {ExecutorErrc::kScratchUnsafe, "scratch_unsafe"},
    {ExecutorErrc::kInvalidArgument, "invalid_argument"},
    {ExecutorErrc::kPolicy, "policy"},
    {ExecutorErrc::kCommandNotFound, "command_not_found"},
    {ExecutorErrc::kDeadline, "deadline"},
    {ExecutorErrc::kCancelled, "cancelled"},
    {ExecutorErrc::kInternal, "internal"},
}};

ErrorKind KindOf(ExecutorErrc errc) {
  switch (errc) {
    case ExecutorErrc::kRefusedByGate: return ErrorKind::kDenied;
    case ExecutorErrc::kSandboxUnavailable:
    case ExecutorErrc::kTtyUnsupported: return ErrorKind::kUnsupported;
    case ExecutorErrc::kCwdOutsideWorkspace:
    case ExecutorErrc::kScratchUnsafe:
    case ExecutorErrc::kPolicy: return ErrorKind::kPolicy;
    case ExecutorErrc::kDeadline:
    case ExecutorErrc::kCancelled: return ErrorKind::kTimeout;
    case ExecutorErrc::kInternal: return ErrorKind::kInternal;
    case ExecutorErrc::kCommandNotFound: return ErrorKind::kNotFound;
    default: return ErrorKind::kUsage;
  }
}

}  // namespace

std::string_view ExecutorErrcName(ExecutorErrc errc) {
  for (const auto& [value, name] : kNames) {
    if (value == errc) return name;
  }
  return "internal";
}

Error ExecutorError(ExecutorErrc errc, std::string message) {
  return Error(KindOf(errc), std::move(message)).WithCode(std::string(ExecutorErrcName(errc)));
}

ExecutorErrc ExecutorErrcOf(const Error& error) {
  for (const auto& [value, name] : kNames) {
    if (error.code() == name) return value;
  }
  switch (error.kind()) {
    case ErrorKind::kDenied: return ExecutorErrc::kRefusedByGate;
    case ErrorKind::kUsage:
    case ErrorKind::kConfig:
    case ErrorKind::kPolicy:
    case ErrorKind::kPinMismatch: return ExecutorErrc::kPolicy;
    case ErrorKind::kTimeout: return ExecutorErrc::kDeadline;
    case ErrorKind::kUnsupported:
    case ErrorKind::kNamespace:
    case ErrorKind::kMount:
    case ErrorKind::kHardening:
    case ErrorKind::kLandlock:
    case ErrorKind::kSeccomp: return ExecutorErrc::kSandboxUnavailable;
    case ErrorKind::kExec:
    case ErrorKind::kNotFound: return ExecutorErrc::kCommandNotFound;
    default: return ExecutorErrc::kInternal;
  }
}

Error Reclassify(ExecutorErrc errc, const Error& error) {
  return ExecutorError(errc, error.ToString());
}

}  // namespace corral::executor
