// The loopback interface of the sandbox's own network namespace.
//
// A new network namespace holds one interface, lo, and the kernel creates it
// down: until it is up, even 127.0.0.1 is unreachable (connect fails with
// ENETUNREACH), so a test suite that starts a server on 127.0.0.1 fails.
// The sandbox's first child brings it up while it still has every capability
// in its user namespace (which owns the new network namespace), before the
// capabilities are dropped. Nothing else is configured: no other address, no
// route, no interface, so a socket inside reaches only the sandbox's own lo,
// never the host's.
//
// Child side (async-signal-safe): raw syscalls only, returning 0 or an errno.
// A failure is fatal to the spawn: the command does not run.
#pragma once

#include <cstdint>

#include "base/sandbox_ports.h"

namespace corral {

// What a spawn does with lo: bring it up (the sandbox has a network
// namespace of its own), or leave it (it shares the host's, or has none).
enum class Loopback { kLeave, kBringUp };

// Sets IFF_UP on lo of the calling process's network namespace (SIOCGIFFLAGS,
// then SIOCSIFFLAGS with CAP_NET_ADMIN over that namespace). An lo already up
// is left as it is, with no privileged call. Returns 0 or an errno.
int BringUpLoopbackChild();

// The services corral runs for the sandbox on its lo, outside it: the name
// server always (net/dns_stub.h), the egress proxy's listeners under
// --allow-host, one listener per --allow-local port (net/egress_proxy.h),
// and under --allow-host one listener on every address per port an allow
// rule names for a name, which takes the connections a proxy-unaware client
// makes to a name's synthetic address (net/synthetic_names.h).
enum class ProxyListeners { kNone, kHttpAndSocks };

// --allow-host: the ports of the allowed names init listens on, on every
// address, for transparent capture (net/synthetic_names.h).
inline constexpr int kMaxCapturedPorts = 16;

inline constexpr int kSandboxServiceSockets = 4 + kMaxLocalPorts + kMaxCapturedPorts;

// The backlog of each listening socket: 4096, net.core.somaxconn's default
// since Linux 5.4 (the kernel cuts a larger one to it). A burst of
// connections at once (npm opens hundreds) waits in the queue while the
// proxy accepts them. With 128 a burst of 300 tunnels overflowed it: SYNs
// were dropped and sent again a second later, and the burst took 1.2 s
// instead of 0.07 (bench/bench_egress.cc).
inline constexpr int kSandboxListenBacklog = 4096;

// Which sockets the child binds; a plain value the child reads without
// allocating.
struct SandboxServices {
  ProxyListeners proxy = ProxyListeners::kNone;
  uint16_t local_ports[kMaxLocalPorts] = {};
  int local_count = 0;
  uint16_t captured_ports[kMaxCapturedPorts] = {};
  int captured_count = 0;

  bool Forwards() const { return proxy != ProxyListeners::kNone || local_count > 0 || captured_count > 0; }
};

// The sockets of those services, on 127.0.0.1 of the calling process's
// network namespace, close-on-exec, made while CAP_NET_BIND_SERVICE is still
// held: fds[0] UDP and fds[1] a listening TCP socket on port 53; with
// kHttpAndSocks, listening TCP sockets on 3128 (fds[2]) and 1080 (fds[3]);
// then one listening TCP socket per local port (fds[4...]), then one per
// captured port on 0.0.0.0 (fds[4 + kMaxLocalPorts...]). Unused entries
// are -1. Returns 0 (all stored) or an errno (none left open).
int BindSandboxServicesChild(const SandboxServices& services, int fds[kSandboxServiceSockets]);

}  // namespace corral
