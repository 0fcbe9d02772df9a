// Which files a root caller must not see: those other users may not use.
//
// A root caller owns /etc's and /proc's root-only files (shadow, ssh host
// keys, slabinfo, kpageflags, ...) and would read them inside the sandbox
// even without capabilities, where an unprivileged caller cannot. corral
// masks each file or directory for which HiddenFromOthers holds: a directory
// others cannot both list and enter, or a regular file others cannot read.
// Anything else (a device, a socket, a symlink) is left to its own rules.
#pragma once

#include <sys/stat.h>

namespace corral {

constexpr bool HiddenFromOthers(mode_t mode) {
  if (S_ISDIR(mode)) return (mode & (S_IROTH | S_IXOTH)) != (S_IROTH | S_IXOTH);
  return S_ISREG(mode) && (mode & S_IROTH) == 0;
}

}  // namespace corral
