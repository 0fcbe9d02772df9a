// Permission presets: a sandbox mode and an approval policy chosen together.
//
//   safe    read-only           + ask-dangerous
//   review  read-only           + ask-dangerous-tool-edit
//   custom  workspace-write     + ask-dangerous
//   danger  danger-full-access  + allow-all
//
//   CORRAL_ASSIGN_OR_RETURN(Preset preset, ResolvePreset("safe"));
//   PermissionState state = DerivedState(preset, /*mode=*/Mode::kWorkspaceWrite, std::nullopt);
//   // state.name == "custom", state.derived, state.overridden == {"mode"}
//
// A mode or approval override that differs from the preset makes the state
// "custom" (derived from the preset it started as), and says what was
// overridden, so a report never claims "safe" for something that is not.
//
// Security: the danger preset runs commands unconfined and without asking.
// It never acknowledges that itself: PolicySpec::acknowledge_danger stays
// false, and the user must still pass --i-understand-danger-full-access (or
// the config key). ApplyTo sets the mode only.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "policy/approval_policy.h"
#include "policy/preset.h"
#include "policy/mode.h"
#include "policy/spec.h"

namespace corral {

// The effective permissions after any overrides.
struct PermissionState {
  std::string name;          // the preset's name, or "custom" when derived
  std::string base_preset;   // the preset it started from
  Mode mode = Mode::kReadOnly;
  ApprovalPolicy approval = ApprovalPolicy::kDenyAll;
  bool derived = false;      // an override changed the preset
  std::vector<std::string> overridden;  // "mode", "approval"
  // danger-full-access still needs the user's acknowledgement.
  bool needs_danger_acknowledgement = false;

  // e.g. "custom (derived from safe; mode overridden): workspace-write + ask-dangerous"
  std::string Describe() const;
  // Sets spec.mode; never touches acknowledge_danger.
  void ApplyTo(PolicySpec& spec) const;
};

PermissionState DerivedState(const Preset& preset, std::optional<Mode> mode_override,
                             std::optional<ApprovalPolicy> approval_override);

}  // namespace corral
