// Sandbox modes (the seed vocabulary), ordered from narrowest to widest:
//   read-only           every grant is read-only; writes land only in the
//                       private /tmp and $HOME, which vanish with the run;
//   workspace-write     the workspace and --allow-write grants are writable;
//   danger-full-access  no sandbox at all: the command runs unconfined. It
//                       needs an explicit acknowledgement and is audited.
#pragma once

#include <optional>
#include <string_view>

namespace corral {

enum class Mode { kReadOnly, kWorkspaceWrite, kDangerFullAccess };

std::string_view ModeName(Mode mode);
std::optional<Mode> ParseMode(std::string_view text);

// True when `to` grants strictly more than `from`.
constexpr bool IsStrictlyWider(Mode to, Mode from) { return static_cast<int>(to) > static_cast<int>(from); }

}  // namespace corral
