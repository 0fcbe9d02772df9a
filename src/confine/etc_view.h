// How the plan keeps the root-only files of /etc from a root caller.
//
// Inside the sandbox root has no capabilities, yet owns root's files: every
// 0600 key or config under /etc would be readable. When the policy asks for
// /etc as others see it (Policy::etc_view, root without a grant in /etc),
// the plan binds /etc through an idmapped mount on which no file is root's
// (kernel/idmapped_tree.h): no listing, no mask per file, and a file made in
// /etc during the run is covered too. Where the host cannot make that mount
// (a filesystem that does not allow idmapping, or one below /etc that does
// not), the plan walks /etc instead and masks every entry others may not
// read (DiscoverEtcSecrets in policy/roots.h), as it did before; the report
// says which.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "confine/mount_plan.h"
#include "policy/policy.h"

namespace corral {

enum class EtcViewOutcome : uint8_t {
  kMasked,    // the policy's own masks (not root, or a grant in /etc)
  kIdmapped,  // /etc seen as others see it
  kWalked,    // root, but /etc could not be idmapped: masked file by file
};

struct EtcViewResult {
  EtcViewOutcome outcome = EtcViewOutcome::kMasked;
  size_t masks = 0;    // kWalked: how many masks the walk added
  std::string reason;  // kWalked: why the idmapped mount was not made
};

// Applies the policy's /etc view to `plan` (built by BuildMountPlan).
// `as_made`: the outcome a warm sandbox's plan had (CompileOptions::
// warm_etc_view), taken as given for a plan that is only compared, never
// spawned: kIdmapped marks the /etc bind prepared without opening a tree
// (it has no descriptor), kWalked walks without trying the mount.
Result<EtcViewResult> PrepareEtcView(const Policy& policy, MountPlan& plan,
                                     std::optional<EtcViewOutcome> as_made = std::nullopt);

// Every mask a backend that cannot idmap (bubblewrap) applies: the policy's,
// and for /etc seen as others, the walk's.
Result<std::vector<MaskedPath>> MasksWithoutIdmap(const Policy& policy);

}  // namespace corral
