#include "kernel/landlock.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cerrno>

#include "base/mutant.h"
#include "kernel/kernel_abi.h"

namespace corral {

int LandlockAbi() {
  static std::atomic<int> cached{-1};
  int abi = cached.load(std::memory_order_relaxed);
  if (abi >= 0) return abi;
  long version = ::syscall(SYS_landlock_create_ruleset, nullptr, 0, kabi::kCreateRulesetVersion);
  abi = version < 0 ? 0 : static_cast<int>(version);
  if (abi > kabi::kLandlockAbiKnown) abi = kabi::kLandlockAbiKnown;
#if defined(CORRAL_HOST_SIMULATION) && CORRAL_HOST_SIMULATION
  // Tests only (CMakeLists.txt): an older kernel's Landlock, simulated.
  if (const char* cap = std::getenv("CORRAL_TEST_LANDLOCK_ABI"); cap != nullptr && *cap >= '0' && *cap <= '9' &&
                                                                 cap[1] == '\0') {
    abi = std::min(abi, *cap - '0');
  }
#endif
  cached.store(abi, std::memory_order_relaxed);
  return abi;
}

LandlockRights LandlockRightsFor(int abi, TcpAccess tcp, std::span<const uint16_t> ports) {
  LandlockRights rights;
  rights.abi = abi;
  if (abi < 1) return rights;
  rights.fs = (kabi::kFsMakeSym << 1) - 1;  // ABI 1: bits 0..12
  if (abi >= 2) rights.fs |= kabi::kFsRefer;
  if (abi >= 3) rights.fs |= kabi::kFsTruncate;
  if (abi >= 5) rights.fs |= kabi::kFsIoctlDev;
  if (abi >= 4 && tcp != TcpAccess::kUnhandled) rights.net = kabi::kNetBindTcp | kabi::kNetConnectTcp;
  if (tcp == TcpAccess::kConnectPorts && MutantActive(Mutant::kLandlockConnectPorts)) rights.net = 0;
  if (rights.net != 0 && tcp == TcpAccess::kConnectPorts) {
    for (uint16_t port : ports) {
      if (rights.connect_port_count == kMaxConnectPorts) break;
      rights.connect_ports[rights.connect_port_count++] = port;
    }
  }
  if (abi >= 6) rights.scoped = kabi::kScopeAbstractUnixSocket | kabi::kScopeSignal;
  return rights;
}

int LandlockCreateRulesetChild(const LandlockRights& rights, int* ruleset_fd) {
  kabi::LandlockRulesetAttr attr = {rights.fs, rights.net, rights.scoped};
  // Older ABIs reject a struct with fields they do not know unless those are 0
  // and the size matches; pass only the prefix the ABI understands.
  size_t size = rights.abi >= 6 ? sizeof attr : rights.abi >= 4 ? 2 * sizeof(uint64_t) : sizeof(uint64_t);
  long fd = ::syscall(SYS_landlock_create_ruleset, &attr, size, 0);
  if (fd < 0) return errno;
  for (int i = 0; i < rights.connect_port_count; ++i) {
    kabi::LandlockNetPortAttr rule = {kabi::kNetConnectTcp, rights.connect_ports[i]};
    if (::syscall(SYS_landlock_add_rule, fd, kabi::kRuleNetPort, &rule, 0) != 0) {
      int err = errno;
      ::close(static_cast<int>(fd));
      return err;
    }
  }
  *ruleset_fd = static_cast<int>(fd);
  return 0;
}

int LandlockAddPathChild(int ruleset_fd, int path_fd, uint64_t access) {
  if (access == 0) return 0;
  kabi::LandlockPathBeneathAttr attr = {access, path_fd};
  return ::syscall(SYS_landlock_add_rule, ruleset_fd, kabi::kRulePathBeneath, &attr, 0) == 0 ? 0 : errno;
}

int LandlockRestrictSelfChild(int ruleset_fd) {
  return ::syscall(SYS_landlock_restrict_self, ruleset_fd, 0) == 0 ? 0 : errno;
}

}  // namespace corral
