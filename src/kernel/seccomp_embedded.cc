#include "kernel/seccomp.h"

namespace corral {
namespace {
#include "seccomp_filters.inc"
}  // namespace

std::span<const sock_filter> EmbeddedSeccompFilter(const SeccompOptions& options) {
  const bool pairs = options.unix_sockets == UnixSockets::kPairsOnly;
  switch (options.inet) {
    case InetSockets::kNone: return pairs ? std::span<const sock_filter>(kFilterNoInetUnixPairs) : kFilterNoInet;
    case InetSockets::kStreamAndDatagram:
      return pairs ? std::span<const sock_filter>(kFilterInetUnixPairs) : kFilterInet;
    case InetSockets::kTcpOnly: return pairs ? std::span<const sock_filter>(kFilterTcpOnlyUnixPairs) : kFilterTcpOnly;
  }
  return kFilterNoInet;
}

std::span<const sock_filter> EmbeddedInitSeccompFilter() { return kFilterInit; }

}  // namespace corral
