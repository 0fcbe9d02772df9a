// The AppArmor profile that lets corral create user namespaces where Ubuntu's
// kernel.apparmor_restrict_unprivileged_userns=1 forbids them to unconfined
// programs (Ubuntu 23.10 and later), as Ubuntu's own profile does for bwrap:
// the `userns,` rule, attached to one binary by its real path, and nothing
// else confined (flags=(unconfined)). `corral setup apparmor` prints it, or
// installs it.
//
//   CORRAL_ASSIGN_OR_RETURN(std::string text, AppArmorProfile("/usr/local/bin/corral"));
#pragma once

#include <string>
#include <string_view>

#include "base/result.h"

namespace corral {

// Where Ubuntu reads profiles from, and the file name corral's takes there.
inline constexpr std::string_view kAppArmorDirectory = "/etc/apparmor.d";
inline constexpr std::string_view kAppArmorProfileName = "corral";

// The profile for the corral binary at `binary` (absolute, symlinks already
// resolved: AppArmor attaches by the path the kernel executes). A path that
// is not absolute, or holds a character AppArmor would read as a pattern or a
// quote (* ? [ ] { } ^ " \ , a control or a space-less newline), is refused:
// the profile must name exactly this file.
Result<std::string> AppArmorProfile(std::string_view binary);

// The one command that loads the profile written to `path`.
std::string AppArmorLoadCommand(std::string_view path);

}  // namespace corral
