// BubblewrapProvider: an argv builder for bwrap(1), for hosts where corral's
// native backend cannot run but bubblewrap can.
//
//   bwrap --unshare-all [--share-net] --die-with-parent --new-session
//         --cap-drop ALL --clearenv --setenv NAME VALUE...
//         <the mount view, sorted by target, parents first>
//         --chdir CWD -- argv...
//
// The mount view mirrors the native one (confine/mount_plan.h): the grants
// (--ro-bind, or --bind when writable), the system symlinks (--symlink), a
// minimal /dev (--dev), a fresh /proc (--proc; bwrap remounts /proc/sys and
// friends read-only itself), a private /tmp and an empty 0700 $HOME (--tmpfs,
// unless a grant covers them), protected paths bound read-only over
// themselves and their parent directories bound over themselves, and masks:
//   - a masked file:      --ro-bind /dev/null FILE. bwrap binds without
//     device access (nodev), so opening it fails with EACCES: it reads as
//     "Permission denied", like the native mask, not as an empty file (it
//     does show up in a listing as a character device);
//   - a masked directory: --perms 0000 --tmpfs DIR --remount-ro DIR: an
//     empty mode-0000 directory the command cannot list, enter or chmod
//     ("Permission denied"), since bwrap drops every capability.
// Anything the policy places below a masked directory stays hidden.
//
// The environment is scrubbed at wrap time (ScrubEnvironment over the given
// environment) and passed as --setenv after --clearenv, so the values travel
// in the argv. Coverage is always kPartial: `gaps` names what bwrap
// cannot give that the native backend gives, and `provided` lacks the exec
// boundary, the syscall filter and the resource limits every policy
// requires. So Confine refuses a policy that requires enforcement
// (CheckEnforceable, code "partial_enforcement"): only a best-effort policy
// (--best-effort) is wrapped.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "confine/provider.h"

namespace corral {

struct BubblewrapOptions {
  std::string bwrap_path = "bwrap";  // argv[0]; a bare name is looked up on PATH by whoever spawns it
  // "NAME=value" entries the scrub starts from; nullopt: this process's environment.
  std::optional<std::vector<std::string>> environment;
};

class BubblewrapProvider final : public Provider {
 public:
  explicit BubblewrapProvider(BubblewrapOptions options = {}) : options_(std::move(options)) {}
  Result<ConfinedArgv> Confine(const std::vector<std::string>& argv, const Policy& policy) override;
  std::string_view name() const override { return "bubblewrap"; }

 private:
  BubblewrapOptions options_;
};

// What bwrap cannot enforce of `policy`, one sentence each.
std::vector<std::string> BubblewrapGaps(const Policy& policy);

// The guarantees the bwrap argv gives for `policy`.
Guarantees BubblewrapGuarantees(const Policy& policy);

}  // namespace corral
