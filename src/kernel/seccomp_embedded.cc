#include "kernel/seccomp.h"

namespace corral {
namespace {
#include "seccomp_filters.inc"
}  // namespace

std::span<const sock_filter> EmbeddedSeccompFilter(const SeccompOptions& options) {
  switch (options.inet) {
    case InetSockets::kNone: return kFilterNoInet;
    case InetSockets::kStreamAndDatagram: return kFilterInet;
    case InetSockets::kTcpOnly: return kFilterTcpOnly;
  }
  return kFilterNoInet;
}

std::span<const sock_filter> EmbeddedInitSeccompFilter() { return kFilterInit; }

}  // namespace corral
