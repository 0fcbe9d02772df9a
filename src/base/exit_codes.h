// corral's exit-code contract.
//
// A command that ran has its own exit code relayed, or 128 + N when signal N
// killed it. When corral itself ends the run, it uses these codes; the audit
// trail's `source` field ("command" or "corral") says which case applies.
#pragma once

#include "base/result.h"

namespace corral {

inline constexpr int kExitUsage = 64;        // bad command line or policy input; nothing spawned
inline constexpr int kExitInternal = 70;     // a bug or an unexpected I/O failure in corral
inline constexpr int kExitPolicy = 77;       // refused by the policy (vetted roots, pin, swapped path, gate)
inline constexpr int kExitConfig = 78;       // a config file was rejected
// The command ran, and left something at a protected path that the sweep
// could neither move out nor delete (it is named on stderr and in the
// `protected` audit record): it would run outside the sandbox later.
inline constexpr int kExitProtectedPathLeft = 79;
// `corral apply`: some of the changes asked for were held back (a conflict,
// a protected path, a special file); each is named on stderr, the run kept.
inline constexpr int kExitChangesHeldBack = 80;
inline constexpr int kExitTimeout = 124;     // --timeout expired; the whole tree was killed
inline constexpr int kExitSandbox = 125;     // the sandbox could not be set up; nothing ran (fail closed)
inline constexpr int kExitNotExecutable = 126;
inline constexpr int kExitNotFound = 127;

int ExitCodeFor(ErrorKind kind);

}  // namespace corral
