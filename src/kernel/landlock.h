// Landlock: the kernel's unprivileged filesystem (and TCP, and scope) access
// control, driven through raw syscalls and the vendored kernel_abi.h.
//
// The parent negotiates the ABI once (LandlockAbi) and computes which rights
// to handle (LandlockRightsFor): every right the kernel knows. Rules mirror the
// mount view: each mount gets the rights its grant gives, so Landlock and the
// mounts agree on every path. The child-side functions run between clone and
// exec: raw syscalls only, returning 0 or an errno.
#pragma once

#include <cstdint>
#include <span>

#include "base/sandbox_ports.h"


namespace corral {

// The Landlock ABI of the running kernel: 0 when Landlock is absent or
// disabled, otherwise 1..kabi::kLandlockAbiKnown. Cached after the first call.
// In a build with CORRAL_HOST_SIMULATION (never a release one),
// CORRAL_TEST_LANDLOCK_ABI=N (one digit) caps it at N, to test the rungs of
// older kernels.
int LandlockAbi();

struct LandlockRights {
  int abi = 0;
  uint64_t fs = 0;      // handled filesystem rights
  uint64_t net = 0;     // handled TCP rights (0: TCP not restricted)
  uint64_t scoped = 0;  // abstract unix sockets and signals
  // With TCP handled: the ports a connect may reach (on any address); no
  // bind is ever allowed.
  uint16_t connect_ports[kMaxConnectPorts] = {};
  int connect_port_count = 0;
};

// Whether Landlock handles TCP: kDenied handles bind and connect (with no
// rule for them, every one is denied); kUnhandled leaves TCP to the network
// namespace (Landlock's TCP rights name ports, not addresses, so they cannot
// allow the sandbox's own loopback and nothing else). kConnectPorts handles
// both too, with a connect rule for each of `ports` (--allow-port).
enum class TcpAccess { kUnhandled, kDenied, kConnectPorts };

// Everything `abi` can express, TCP as `tcp` says; `ports` (at most
// kMaxConnectPorts) only with kConnectPorts. Below ABI 4 TCP is not handled
// at all: the caller decides whether that may run.
LandlockRights LandlockRightsFor(int abi, TcpAccess tcp, std::span<const uint16_t> ports = {});

// Child side (async-signal-safe). Each returns 0 or a positive errno.
// LandlockCreateRulesetChild stores the new ruleset's fd in `ruleset_fd`,
// with the connect rules of `rights.connect_ports` added.
int LandlockCreateRulesetChild(const LandlockRights& rights, int* ruleset_fd);
int LandlockAddPathChild(int ruleset_fd, int path_fd, uint64_t access);
int LandlockRestrictSelfChild(int ruleset_fd);

}  // namespace corral
