#include "confine/apparmor_profile.h"

#include "base/mutant.h"

namespace corral {

Result<std::string> AppArmorProfile(std::string_view binary) {
  if (binary.empty() || binary.front() != '/') {
    return Error(ErrorKind::kUsage, "apparmor: the corral binary's path is not absolute: " + std::string(binary));
  }
  for (char c : binary) {
    unsigned char u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f || std::string_view("*?[]{}^\"\\,").find(c) != std::string_view::npos) {
      return Error(ErrorKind::kUsage,
                   "apparmor: the corral binary's path holds a character AppArmor would read as a pattern or a "
                   "quote; install corral at a plain path (such as /usr/local/bin/corral) and run this again");
    }
  }
  // The mutant names the usual install path, not the binary that runs.
  std::string target = MutantActive(Mutant::kApparmorTarget) ? std::string("/usr/bin/corral") : std::string(binary);
  return "# AppArmor profile for corral, written by `corral setup apparmor`.\n"
         "# kernel.apparmor_restrict_unprivileged_userns=1 gives an unconfined program a user\n"
         "# namespace without capabilities; this profile, like Ubuntu's own for bwrap, lets\n"
         "# this one binary create them. It confines nothing else: corral's sandbox does.\n"
         "abi <abi/4.0>,\n"
         "include <tunables/global>\n"
         "\n"
         "profile " + std::string(kAppArmorProfileName) + " \"" + target + "\" flags=(unconfined) {\n"
         "  userns,\n"
         "\n"
         "  # Site-specific additions and overrides.\n"
         "  include if exists <local/" + std::string(kAppArmorProfileName) + ">\n"
         "}\n";
}

std::string AppArmorLoadCommand(std::string_view path) {
  return "sudo apparmor_parser -r " + std::string(path);
}

}  // namespace corral
