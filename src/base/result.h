// Result<T>: a value or an Error, returned across every syscall boundary.
//
// An Error carries a kind (which decides the audit reason and the exit code),
// a human sentence, and, when a syscall failed, the syscall's name and errno.
// No exception crosses a syscall boundary in corral; code that can fail
// returns Result and callers propagate with CORRAL_TRY / CORRAL_ASSIGN_OR_RETURN.
//
//   Result<UniqueFd> OpenDir(const std::string& path);
//   CORRAL_ASSIGN_OR_RETURN(UniqueFd dir, OpenDir("/srv"));
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace corral {

// What failed. The set is closed: audit reasons and exit codes derive from it.
enum class ErrorKind {
  kUsage,        // bad command line or bad policy input; nothing was spawned
  kConfig,       // a config file was rejected
  kPolicy,       // the policy refused the run (vetted roots, swapped path, ...)
  kPinMismatch,  // the program's bytes are not the pinned digest
  kUnsupported,  // the host lacks a mechanism the policy requires
  kNamespace,    // creating or entering namespaces failed
  kMount,        // building the mount view failed
  kHardening,    // setsid, rlimits, capabilities or no_new_privs failed
  kLandlock,     // the Landlock ruleset could not be built or applied
  kSeccomp,      // the seccomp filter could not be built or installed
  kExec,         // the command could not be executed
  kNotFound,     // the command was not found inside the sandbox
  kTimeout,      // the run exceeded its deadline
  kDenied,       // a gate (approval, escalation, grant) refused
  kIo,           // an I/O error outside the categories above
  kInternal,     // a bug in corral
};

std::string_view ErrorKindName(ErrorKind kind);

class Error {
 public:
  Error(ErrorKind kind, std::string message) : kind_(kind), message_(std::move(message)) {}
  Error(ErrorKind kind, std::string message, std::string_view syscall, int err)
      : kind_(kind), message_(std::move(message)), syscall_(syscall), errno_(err) {}

  // "<context>: <syscall>: <strerror>" from the current or a given errno.
  static Error FromErrno(ErrorKind kind, std::string context, std::string_view syscall, int err);

  ErrorKind kind() const { return kind_; }
  const std::string& message() const { return message_; }
  // A stable, machine-readable label refining the kind (for example
  // "grant_replayed" or "escalation_not_wider"); empty when the kind says it all.
  const std::string& code() const { return code_; }
  Error&& WithCode(std::string code) && {
    code_ = std::move(code);
    return std::move(*this);
  }
  const std::string& syscall() const { return syscall_; }
  int error_number() const { return errno_; }

  // One line for humans: the message, then the syscall and errno when present.
  std::string ToString() const;

 private:
  ErrorKind kind_;
  std::string message_;
  std::string syscall_;
  std::string code_;
  int errno_ = 0;
};

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::in_place_index<0>, std::move(value)) {}  // NOLINT: implicit by design
  Result(Error error) : state_(std::in_place_index<1>, std::move(error)) {}  // NOLINT

  bool ok() const { return state_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & { return std::get<0>(state_); }
  const T& value() const& { return std::get<0>(state_); }
  T&& value() && { return std::get<0>(std::move(state_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  const Error& error() const& { return std::get<1>(state_); }
  Error&& error() && { return std::get<1>(std::move(state_)); }

 private:
  std::variant<T, Error> state_;
};

template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : error_(std::move(error)), ok_(false) {}  // NOLINT

  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const Error& error() const& { return error_; }
  Error&& error() && { return std::move(error_); }

 private:
  Error error_{ErrorKind::kInternal, ""};
  bool ok_ = true;
};

using Status = Result<void>;
inline Status Ok() { return {}; }

}  // namespace corral

#define CORRAL_CONCAT_INNER(a, b) a##b
#define CORRAL_CONCAT(a, b) CORRAL_CONCAT_INNER(a, b)

// Returns the error of `expr` from the enclosing function if it failed.
#define CORRAL_TRY(expr)                                        \
  do {                                                          \
    auto&& corral_try_result_ = (expr);                         \
    if (!corral_try_result_.ok()) return std::move(corral_try_result_).error(); \
  } while (0)

#define CORRAL_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                 \
  if (!tmp.ok()) return std::move(tmp).error();      \
  lhs = std::move(tmp).value()

// `CORRAL_ASSIGN_OR_RETURN(Type name, expr);` binds the value or returns the error.
#define CORRAL_ASSIGN_OR_RETURN(lhs, expr) \
  CORRAL_ASSIGN_OR_RETURN_IMPL(CORRAL_CONCAT(corral_result_, __LINE__), lhs, expr)
