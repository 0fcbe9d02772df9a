// The ports of corral's own services on the sandbox's 127.0.0.1, which the
// sandbox's init binds and corral serves from outside (kernel/loopback.h):
// the name server, the egress proxy's HTTP and SOCKS5 listeners, and how
// many --allow-local ports can be forwarded besides them. The policy refuses
// an --allow-local port that is one of these (policy/egress_rules.h); the
// command's proxy variables name them (confine/env.h).
#pragma once

namespace corral {

inline constexpr int kSandboxDnsPort = 53;
inline constexpr int kSandboxHttpProxyPort = 3128;
inline constexpr int kSandboxSocksPort = 1080;
inline constexpr int kMaxLocalPorts = 16;
// --allow-port: TCP ports Landlock opens to every host (kernel/landlock.h).
inline constexpr int kMaxConnectPorts = 16;

}  // namespace corral
