// A permission preset: a named sandbox mode and approval policy chosen
// together. Plain data, so config files can name one; resolve/presets.h
// applies a preset and its overrides.
//   safe    read-only           + ask-dangerous
//   review  read-only           + ask-dangerous-tool-edit
//   custom  workspace-write     + ask-dangerous
//   danger  danger-full-access  + allow-all
#pragma once

#include <array>
#include <string_view>

#include "base/result.h"
#include "policy/approval_policy.h"
#include "policy/mode.h"

namespace corral {

struct Preset {
  std::string_view name;
  Mode mode;
  ApprovalPolicy approval;
};

// The four presets, in the order above.
const std::array<Preset, 4>& AllPresets();

// ErrorKind::kUsage, code "unknown_preset", for any other name.
Result<Preset> ResolvePreset(std::string_view name);

}  // namespace corral
