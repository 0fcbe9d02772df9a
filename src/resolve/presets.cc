#include "resolve/presets.h"

namespace corral {

std::string PermissionState::Describe() const {
  std::string text = name;
  if (derived) {
    text += " (derived from " + base_preset + ";";
    for (const std::string& what : overridden) text += " " + what;
    text += " overridden)";
  }
  text += ": " + std::string(ModeName(mode)) + " + " + std::string(ApprovalPolicyName(approval));
  if (needs_danger_acknowledgement) text += " (needs --i-understand-danger-full-access)";
  return text;
}

void PermissionState::ApplyTo(PolicySpec& spec) const { spec.mode = mode; }

PermissionState DerivedState(const Preset& preset, std::optional<Mode> mode_override,
                             std::optional<ApprovalPolicy> approval_override) {
  PermissionState state;
  state.base_preset = std::string(preset.name);
  state.mode = mode_override.value_or(preset.mode);
  state.approval = approval_override.value_or(preset.approval);
  if (state.mode != preset.mode) state.overridden.push_back("mode");
  if (state.approval != preset.approval) state.overridden.push_back("approval");
  state.derived = !state.overridden.empty();
  state.name = state.derived ? "custom" : state.base_preset;
  state.needs_danger_acknowledgement = state.mode == Mode::kDangerFullAccess;
  return state;
}

}  // namespace corral
