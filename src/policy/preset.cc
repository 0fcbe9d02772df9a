#include "policy/preset.h"

#include <string>

namespace corral {

const std::array<Preset, 4>& AllPresets() {
  static const std::array<Preset, 4> kPresets = {{
      {"safe", Mode::kReadOnly, ApprovalPolicy::kAskDangerous},
      {"review", Mode::kReadOnly, ApprovalPolicy::kAskDangerousToolEdit},
      {"custom", Mode::kWorkspaceWrite, ApprovalPolicy::kAskDangerous},
      {"danger", Mode::kDangerFullAccess, ApprovalPolicy::kAllowAll},
  }};
  return kPresets;
}

Result<Preset> ResolvePreset(std::string_view name) {
  for (const Preset& preset : AllPresets()) {
    if (preset.name == name) return preset;
  }
  std::string shown(name.substr(0, 64));
  for (char& c : shown) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  }
  return Error(ErrorKind::kUsage, "unknown preset \"" + shown + "\" (expected safe, review, custom or danger)")
      .WithCode("unknown_preset");
}

}  // namespace corral
