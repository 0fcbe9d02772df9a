// PasswdHome: the home directory the host's user database gives a uid, found
// without the name service switch's loadable modules, so that corral can be
// one static binary (a static glibc may load those modules only from the
// very glibc it was linked with, and a security update breaks that).
//
//   std::optional<std::string> home = PasswdHome(::getuid());
//
// Contract:
// - /etc/passwd first, up to the uid's first entry (the "files" source,
//   which every stock nsswitch.conf puts first), read by glibc's own parser
//   of that source (fgetpwent_r: blank and `#` lines, and lines it cannot
//   parse, are passed over). NIS compat entries (`+` and `-`) are not
//   entries.
// - A uid that file lacks is asked of `getent passwd UID` (/usr/bin/getent,
//   else /bin/getent), which answers from the host's other sources (LDAP,
//   sssd, systemd-homed): a fork and exec for such a user on each run. It
//   runs with an empty environment, stdin and stderr on /dev/null, and gets
//   10 s (then it is killed and gives nothing); it must exit 0, and its
//   answer counts only if it is an entry for the uid asked.
// - The entry's home as written; nullopt when no source has the uid, getent
//   cannot run, or the home is empty or not absolute.
//
// PasswdHomeFrom is the same with the passwd file, the getent programs and
// getent's deadline named, for tests.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace corral {

inline constexpr std::chrono::milliseconds kGetentDeadline{10'000};

std::optional<std::string> PasswdHome(uid_t uid);

std::optional<std::string> PasswdHomeFrom(uid_t uid, const std::string& passwd_file,
                                          const std::vector<std::string>& getent_programs,
                                          std::chrono::milliseconds deadline = kGetentDeadline);

}  // namespace corral
