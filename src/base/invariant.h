// CORRAL_INVARIANT: an internal consistency check that must never fail.
//
// An invariant states something corral's own code guarantees (a resolved mode
// is one of the three, an approved escalation is strictly wider), not
// something input can violate: input errors are Results. When the build
// defines CORRAL_INVARIANTS (Debug builds and every test build; see
// src/CMakeLists.txt), a false condition prints
//   [corral invariant] <message> (<file>:<line>)
// to stderr and aborts the process. Otherwise the macro compiles to nothing:
// the condition and message are still type-checked but never evaluated, so
// they must have no side effects the program relies on.
//
//   CORRAL_INVARIANT(IsStrictlyWider(target, current), "escalation target is not wider");
//
// Security: an invariant is never the only line of defence. Code that guards
// a boundary returns an Error on the bad path and asserts the invariant too.
#pragma once

#include <string_view>

namespace corral::internal {

// Prints the `[corral invariant]` line and aborts. Never returns.
[[noreturn]] void InvariantFailed(std::string_view message, const char* file, int line);

}  // namespace corral::internal

#if defined(CORRAL_INVARIANTS)
#define CORRAL_INVARIANT(condition, message)                                   \
  do {                                                                         \
    if (!(condition)) ::corral::internal::InvariantFailed((message), __FILE__, __LINE__); \
  } while (0)
#else
#define CORRAL_INVARIANT(condition, message) \
  do {                                       \
    (void)sizeof(!(condition));              \
    (void)sizeof(message);                   \
  } while (0)
#endif
