// BringUpLoopbackChild in forked children, each in a network namespace of
// its own (a new one's lo starts down): it brings lo up with the
// capabilities of the namespace's owner, leaves an lo that is up alone, and
// fails with EPERM (lo still down) once those capabilities are dropped, which a spawn
// turns into a refusal (exec/spawn_test.cc, ChildStage::kLoopback).
#include "kernel/loopback.h"

#include <linux/capability.h>
#include <net/if.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <gtest/gtest.h>

namespace corral {
namespace {

enum ChildExit {
  kOk = 0,
  kUnshareFailed = 1,
  kWasUp = 2,
  kBringUpFailed = 3,
  kStillDown = 4,
  kSecondCallFailed = 5,
  kNotEperm = 6,
  kCameUp = 7,
};

// -1 when the flags cannot be read.
int LoopbackFlags() {
  int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  struct ifreq request = {};
  std::strcpy(request.ifr_name, "lo");
  int flags = ::ioctl(fd, SIOCGIFFLAGS, &request) == 0 ? request.ifr_flags : -1;
  ::close(fd);
  return flags;
}

bool Up() { return LoopbackFlags() >= 0 && (LoopbackFlags() & IFF_UP) != 0; }

int OwnNamespaceChild() {
  if (::unshare(CLONE_NEWUSER | CLONE_NEWNET) != 0) return kUnshareFailed;
  if (Up()) return kWasUp;
  if (BringUpLoopbackChild() != 0) return kBringUpFailed;
  if (!Up()) return kStillDown;
  if (BringUpLoopbackChild() != 0) return kSecondCallFailed;
  return kOk;
}

// The owner of the network namespace with its capabilities dropped.
int WithoutCapabilitiesChild() {
  if (::unshare(CLONE_NEWUSER | CLONE_NEWNET) != 0) return kUnshareFailed;
  struct __user_cap_header_struct header = {_LINUX_CAPABILITY_VERSION_3, 0};
  struct __user_cap_data_struct none[2] = {};
  if (::syscall(SYS_capset, &header, none) != 0) return kUnshareFailed;
  if (BringUpLoopbackChild() != EPERM) return kNotEperm;
  if (Up()) return kCameUp;
  return kOk;
}

int RunChild(int (*body)()) {
  pid_t pid = ::fork();
  if (pid < 0) return -1;
  if (pid == 0) ::_exit(body());
  int status = 0;
  if (::waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

TEST(Loopback, ANewNamespacesLoComesUp) { EXPECT_EQ(RunChild(OwnNamespaceChild), kOk); }

TEST(Loopback, WithoutCapabilitiesOverTheNamespaceItFailsWithEperm) {
  EXPECT_EQ(RunChild(WithoutCapabilitiesChild), kOk);
}

}  // namespace
}  // namespace corral
