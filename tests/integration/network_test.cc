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

// Inside, sendto succeeds: the datagrams go to the sandbox's own lo, where
// nothing listens. Judged by the host's listener alone.
TEST_F(NetworkEscape, UdpToAHostLoopbackListenerFails) {
  Listener listener = Listener::Udp();
  std::string port = std::to_string(listener.port());
  ExpectReachableWithoutCorral("udp_send", port, listener);
  while (listener.GotSomething()) {
  }
  Outcome outcome = Probe("udp_send", {port});
  EXPECT_TRUE(outcome.exit_code == kProbeBlocked || outcome.exit_code == kProbeEscaped) << outcome.Describe();
  EXPECT_FALSE(listener.GotSomething());
}

// The sandbox's own loopback works under --network none: a TCP server and a
// UDP socket the command binds on 127.0.0.1 are reachable from inside,
// while the host listeners on 127.0.0.1 above get nothing.
TEST_F(NetworkEscape, AServerOnTheSandboxsOwnLoopbackIsReachableFromInside) {
  Outcome outcome = Probe("loopback_server", {});
  EXPECT_EQ(outcome.exit_code, kProbeEscaped) << outcome.Describe();
  EXPECT_NE(outcome.out.find("tcp recv: SUCCEEDED"), std::string::npos) << outcome.Describe();
  EXPECT_NE(outcome.out.find("udp recv: SUCCEEDED"), std::string::npos) << outcome.Describe();
}

// The same with a real server: python3's http.server on 127.0.0.1 inside,
// fetched from inside.
TEST_F(NetworkEscape, AnHttpServerTheCommandStartsServesInsideTheSandbox) {
  std::string script =
      "python3 -m http.server --bind 127.0.0.1 8765 >/dev/null 2>&1 & "
      "for i in $(seq 100); do "
      "python3 -c 'import urllib.request,sys; "
      "sys.stdout.write(urllib.request.urlopen(\"http://127.0.0.1:8765/\").read().decode()[:400])' "
      "2>/dev/null && break; sleep 0.1; done; kill $!";
  Outcome outcome = RunIn({}, {"sh", "-c", script});
  EXPECT_NE(outcome.out.find("Directory listing"), std::string::npos) << outcome.Describe();
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

// A name lookup under --network none fails at once: the view's resolv.conf
// names the sandbox's own name server, which answers NXDOMAIN, and corral
// names what was looked up in one stderr line. Nothing goes anywhere: the
// namespace is empty (the host-listener tests above).
TEST_F(NetworkEscape, ANameLookupFailsAtOnceAndCorralNamesIt) {
  Outcome resolv = RunIn({}, {"cat", "/etc/resolv.conf"});
  EXPECT_EQ(resolv.out, "nameserver 127.0.0.1\noptions attempts:1 timeout:1\n") << resolv.Describe();
  Outcome one = RunIn({}, {"getent", "hosts", "example.com"});
  EXPECT_EQ(one.exit_code, 2) << one.Describe();  // getent: the key was not found
  EXPECT_NE(one.err.find("corral: no network: lookup of example.com refused (--network none)\n"), std::string::npos)
      << one.Describe();
  Outcome three =
      RunIn({}, {"sh", "-c", "getent hosts registry.npmjs.org; getent ahosts pypi.org; getent hosts registry.npmjs.org"});
  EXPECT_NE(three.err.find("corral: no network: lookup of registry.npmjs.org and 1 more refused (--network none)\n"),
            std::string::npos)
      << three.Describe();
  Outcome none = RunIn({}, {"true"});
  EXPECT_EQ(none.err.find("lookup of"), std::string::npos) << none.Describe();
}

// The rung without a network namespace (--best-effort where namespaces are
// refused; here corral inside corral, whose filter refuses new namespaces):
// INET sockets stay denied. Judged outside the inner run: a listener the
// outer command starts on its own loopback writes `reached` into the
// workspace when anything connects; the outer command's own connect is the
// control.
TEST_F(NetworkEscape, WithoutANetworkNamespaceInetSocketsStayDenied) {
  workspace_.Write("listen.py",
                   "import socket\n"
                   "s = socket.socket()\n"
                   "s.bind(('127.0.0.1', 0))\n"
                   "s.listen()\n"
                   "open('port.tmp', 'w').write(str(s.getsockname()[1]))\n"
                   "__import__('os').rename('port.tmp', 'port')\n"
                   "s.accept()\n"
                   "open('reached', 'w').write('x')\n");
  auto attempt = [&](const std::string& connect) {
    std::string script = "rm -f port reached; python3 listen.py & "
                         "while [ ! -s port ]; do sleep 0.05; done; " +
                         connect + " $(cat port); sleep 0.3; kill $! 2>/dev/null; true";
    return RunIn({"--allow-exec", CorralBin(), "--allow-exec", ProbesDir()}, {"sh", "-c", script});
  };
  Outcome control = attempt(ProbePath("tcp_connect"));
  EXPECT_EQ(control.exit_code, 0) << control.Describe();
  EXPECT_TRUE(Exists(workspace_ / "reached")) << control.Describe();
  Outcome inner = attempt(CorralBin() + " run --best-effort --allow-exec " + ProbesDir() + " -- " +
                          ProbePath("tcp_connect"));
  EXPECT_NE(inner.err.find("it ran without namespaces"), std::string::npos) << inner.Describe();
  EXPECT_NE(inner.out.find("socket(AF_INET, SOCK_STREAM): blocked (Operation not permitted)"), std::string::npos)
      << inner.Describe();
  EXPECT_FALSE(Exists(workspace_ / "reached")) << inner.Describe();
}

// Besides the probe's own word, checked from outside: the filter corral
// installs answers EPERM to the packet family, whatever the network mode,
// and to raw INET sockets (KernelEscape.TheSeccompFilterIsWhatDeniesTheCalls
// shows the filter alone doing it; the missing CAP_NET_RAW, which
// ProcessEscape.ConfinedProcessHasNoPrivilegesAsSeenFromOutside reads in
// /proc/PID/status, would refuse them too).
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
