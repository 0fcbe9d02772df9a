// Rungs: the named shapes of sandbox a host can give, from full down.
//
// corral never runs silently weaker: a plan names every rung it stands on
// (Plan::rungs(), in the report, `corral check`, `corral explain --json` and
// the audit trail's spawned record), and a rung that drops a guarantee runs
// only under --best-effort (confine/plan.h refuses otherwise, naming the rung
// and the fix). docs/hosts.md says which hosts give which rung.
//
//   full          user namespaces, Landlock ABI 6 or newer, seccomp: everything.
//   landlock-4-5  Landlock without scopes (abstract unix sockets, signals);
//                 with namespaces the network and PID namespaces cover them,
//                 so no guarantee drops.
//   landlock-1-3  also no TCP rules, and before ABI 2 no cross-directory
//                 rename or link (refused: narrower, not weaker), before ABI
//                 3 no truncate rule (the read-only binds still stop it).
//   no-landlock   the namespaces and the mount view alone: no exec boundary,
//                 and the read boundary is the mount view's.
//   masked-proc   the namespaces and Landlock, but an empty read-only /proc:
//                 where the host masks parts of its own /proc (Docker's
//                 default), the kernel refuses a fresh one in a nested PID
//                 namespace. Nothing of the host shows; tools that read /proc
//                 (ps, /proc/self/exe, /dev/fd and /dev/stdin, which link
//                 into it) fail.
//   no-userns     Landlock, seccomp, no_new_privs and rlimits on the caller's
//                 own view of the filesystem (as landrun does): no fresh root,
//                 no PID or network namespace; a secret outside the grants is
//                 refused by Landlock (EACCES), not invisible; INET sockets are
//                 refused by seccomp.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace corral {

enum class Rung { kFull, kLandlock4To5, kLandlock1To3, kNoLandlock, kMaskedProc, kNoUserNamespaces };

std::string_view RungName(Rung rung);

// "no-userns + landlock-1-3"; "full" for an empty list.
std::string RungsText(const std::vector<Rung>& rungs);

}  // namespace corral
