// Network escapes, judged by host listeners in the test process: a denial
// means the listener got no connection and no datagram.
#include <linux/seccomp.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include <cerrno>

#include "harness.h"

namespace corral_it {
namespace {

class NetworkEscape : public SandboxTest {
 protected:
  // Control: outside corral the probe does reach `listener`.
  void ExpectReachableWithoutCorral(const std::string& probe, const std::string& target, const Listener& listener) {
    Outcome bare = Execute({ProbePath(probe), target});
    EXPECT_EQ(bare.exit_code, kProbeEscaped) << bare.Describe();
    EXPECT_TRUE(listener.GotSomething());
  }
};

TEST_F(NetworkEscape, TcpToAHostLoopbackListenerFails) {
  Listener listener = Listener::Tcp();
  std::string port = std::to_string(listener.port());
  ExpectReachableWithoutCorral("tcp_connect", port, listener);
  EXPECT_PROBE_BLOCKED(Probe("tcp_connect", {port}));
  EXPECT_FALSE(listener.GotSomething());
}

TEST_F(NetworkEscape, TcpWithNetworkAllReachesTheListener) {
  // Positive control: --network all shares the host's network.
  Listener listener = Listener::Tcp();
  Outcome outcome = Probe("tcp_connect", {std::to_string(listener.port())}, {"--network", "all"});
  EXPECT_EQ(outcome.exit_code, kProbeEscaped) << outcome.Describe();
  EXPECT_TRUE(listener.GotSomething());
}

TEST_F(NetworkEscape, UdpToAHostLoopbackListenerFails) {
  Listener listener = Listener::Udp();
  std::string port = std::to_string(listener.port());
  ExpectReachableWithoutCorral("udp_send", port, listener);
  while (listener.GotSomething()) {
  }
  EXPECT_PROBE_BLOCKED(Probe("udp_send", {port}));
  EXPECT_FALSE(listener.GotSomething());
}

TEST_F(NetworkEscape, AbstractUnixSocketOfTheHostIsUnreachable) {
  std::string name = RandomToken("corral-abstract");
  Listener listener = Listener::UnixAbstract(name);
  ExpectReachableWithoutCorral("unix_connect", "@" + name, listener);
  EXPECT_PROBE_BLOCKED(Probe("unix_connect", {"@" + name}));
  EXPECT_FALSE(listener.GotSomething());
}

TEST_F(NetworkEscape, AbstractUnixSocketIsUnreachableEvenWithNetworkAll) {
  // The host's network namespace is shared, so only Landlock's scope stops it.
  std::string name = RandomToken("corral-abstract");
  Listener listener = Listener::UnixAbstract(name);
  EXPECT_PROBE_BLOCKED(Probe("unix_connect", {"@" + name}, {"--network", "all"}));
  EXPECT_FALSE(listener.GotSomething());
}

TEST_F(NetworkEscape, PathnameUnixSocketOutsideTheGrantsIsUnreachable) {
  std::string path = outside_ / "host.sock";
  Listener listener = Listener::UnixPath(path);
  ExpectReachableWithoutCorral("unix_connect", path, listener);
  EXPECT_PROBE_BLOCKED(Probe("unix_connect", {path}));
  EXPECT_PROBE_BLOCKED(Probe("unix_connect", {path}, {"--network", "all"}));
  EXPECT_FALSE(listener.GotSomething());
}

TEST_F(NetworkEscape, NonClaimUnixSocketInsideAReadOnlyGrantIsReachable) {
  // A NON-CLAIM, pinned by a test: connecting to a pathname socket needs no
  // write access to the tree it is in, and Landlock (ABI <= 7) does not
  // restrict it, so a socket inside any granted tree, even a read-only one,
  // can be reached. Do not grant trees that hold sockets (/run, agent dirs).
  outside_.Mkdir("ro");
  std::string path = outside_ / "ro/host.sock";
  Listener listener = Listener::UnixPath(path);
  Outcome outcome = Probe("unix_connect", {path}, {"--allow-read", outside_ / "ro"});
  EXPECT_EQ(outcome.exit_code, kProbeEscaped) << outcome.Describe();
  EXPECT_TRUE(listener.GotSomething());
}

// Besides the probe's own word, checked from outside: the filter corral
// installs answers EPERM to the socket families, whatever the network mode
// (a raw AF_INET socket under --network all is left to the missing
// CAP_NET_RAW, which ProcessEscape.ConfinedProcessHasNoPrivilegesAsSeenFromOutside
// reads in /proc/PID/status).
TEST_F(NetworkEscape, RawSocketsFail) {
  EXPECT_PROBE_BLOCKED(Probe("raw_socket", {}));
  EXPECT_PROBE_BLOCKED(Probe("raw_socket", {}, {"--network", "all"}));
  EXPECT_EQ(EmbeddedFilterVerdict(SYS_socket, AF_PACKET), SECCOMP_RET_ERRNO | EPERM);
}

TEST_F(NetworkEscape, NetlinkSocketsFail) {
  EXPECT_PROBE_BLOCKED(Probe("netlink_socket", {}));
  EXPECT_PROBE_BLOCKED(Probe("netlink_socket", {}, {"--network", "all"}));
  EXPECT_EQ(EmbeddedFilterVerdict(SYS_socket, AF_NETLINK), SECCOMP_RET_ERRNO | EPERM);
}

}  // namespace
}  // namespace corral_it
