#include "kernel/seccomp.h"

namespace corral {
namespace {
#include "seccomp_filters.inc"
}  // namespace

std::span<const sock_filter> EmbeddedSeccompFilter(const SeccompOptions& options) {
  return options.allow_inet ? std::span<const sock_filter>(kFilterInet) : std::span<const sock_filter>(kFilterNoInet);
}

std::span<const sock_filter> EmbeddedInitSeccompFilter() { return kFilterInit; }

}  // namespace corral
