// --allow-port through a real sandbox: the command shares the host's network
// and opens TCP connections to the ports named, and nothing else. Each
// denial is judged outside: the host's listener on another port saw no
// connection, the host's UDP listener no datagram, and no socket of the
// sandbox's processes is listening in the host's /proc/net/tcp.
#include <dirent.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "harness.h"

namespace corral_it {
namespace {

// The socket inodes processes matching `needle` hold open.
std::set<std::string> SocketInodes(const std::string& needle) {
  std::set<std::string> inodes;
  for (pid_t pid : ProcessesMatching(needle)) {
    const std::string dir = "/proc/" + std::to_string(pid) + "/fd";
    std::error_code error;
    for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
      std::string target = std::filesystem::read_symlink(entry.path(), error).string();
      if (target.rfind("socket:[", 0) == 0) inodes.insert(target.substr(8, target.size() - 9));
    }
  }
  return inodes;
}

// Whether one of `inodes` is a listening TCP socket of the host's network.
bool ListeningInHostNetwork(const std::set<std::string>& inodes) {
  for (const char* table : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    std::ifstream in(table);
    std::string line;
    std::getline(in, line);  // the header
    while (std::getline(in, line)) {
      std::istringstream fields(line);
      std::string slot, local, remote, state, queues, timer, retransmits, uid, timeout, inode;
      fields >> slot >> local >> remote >> state >> queues >> timer >> retransmits >> uid >> timeout >> inode;
      if (state == "0A" && inodes.count(inode) > 0) return true;
    }
  }
  return false;
}

// The paths /proc/net/unix of the host's network gives `inodes` ("@..."
// for an abstract name; empty for an unbound socket).
std::vector<std::string> UnixNamesInHostNetwork(const std::set<std::string>& inodes) {
  std::vector<std::string> names;
  std::ifstream in("/proc/net/unix");
  std::string line;
  std::getline(in, line);  // the header
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string slot, references, protocol, flags, type, state, inode, path;
    fields >> slot >> references >> protocol >> flags >> type >> state >> inode;
    if (inodes.count(inode) == 0) continue;
    std::getline(fields, path);
    path.erase(0, path.find_first_not_of(' '));
    names.push_back(path);
  }
  return names;
}

// The first name of the host's /etc/hosts that is not localhost's.
std::string HostsFileName() {
  std::ifstream in("/etc/hosts");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line.substr(0, line.find('#')));
    std::string address, name;
    words >> address;
    while (words >> name) {
      if (name.find("localhost") == std::string::npos && name.find("loopback") == std::string::npos) return name;
    }
  }
  return "";
}

class AllowPort : public SandboxTest {
 protected:
  Outcome Python(const std::vector<std::string>& rules, const std::string& script) {
    return RunIn(rules, {"/usr/bin/python3", "-c", script});
  }
};

TEST_F(AllowPort, ReachesThatPortOfTheHostAndNoOther) {
  Listener allowed = Listener::Tcp();
  Listener other = Listener::Tcp();
  const std::string a = std::to_string(allowed.port()), o = std::to_string(other.port());
  Outcome outcome = Python({"--allow-port", a},
                           "import socket\n"
                           "for port in (" + a + ", " + o + "):\n"
                           "    try:\n"
                           "        socket.create_connection(('127.0.0.1', port), timeout=5); print(port, 'open')\n"
                           "    except OSError as e: print(port, e.errno)\n");
  EXPECT_EQ(outcome.exit_code, 0) << outcome.Describe();
  EXPECT_EQ(outcome.out, a + " open\n" + o + " 13\n") << outcome.Describe();
  EXPECT_TRUE(allowed.GotSomething()) << "the allowed port's listener saw the connection";
  EXPECT_FALSE(other.GotSomething()) << "another port of the host was reached: " << outcome.Describe();
  std::vector<nlohmann::json> spawned = AuditEvents("spawned");
  ASSERT_EQ(spawned.size(), 1u);
  EXPECT_EQ(spawned[0]["network"], "ports");
}

// What Landlock's TCP rules do not see is refused by seccomp: UDP, a
// listening socket (which needs no bind to get a port), and a connect made
// by a send with MSG_FASTOPEN.
TEST_F(AllowPort, UdpListeningAndFastOpenFail) {
  Listener allowed = Listener::Tcp();
  Listener other = Listener::Tcp();
  Listener udp = Listener::Udp();
  const std::string token = RandomToken("allow-port-listen");
  Process run(RunArgv({"--allow-port", std::to_string(allowed.port())},
                      {"/usr/bin/python3", "-c",
                       "import socket, sys, time\n"
                       "try:\n"
                       "    socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'x', ('127.0.0.1', " +
                           std::to_string(udp.port()) + "))\n"
                       "    print('udp sent')\n"
                       "except OSError as e: print('udp', e.errno)\n"
                       "try:\n"
                       "    socket.socket().sendto(b'x', socket.MSG_FASTOPEN, ('127.0.0.1', " +
                           std::to_string(other.port()) + "))\n"
                       "    print('fastopen sent')\n"
                       "except OSError as e: print('fastopen', e.errno)\n"
                       "server = socket.socket()\n"
                       "try:\n"
                       "    server.listen(); print('listening on', server.getsockname()[1])\n"
                       "except OSError as e: print('listen', e.errno)\n"
                       "sys.stdout.flush()\n"
                       "time.sleep(3)\n",
                       token}),
              Defaults({}));
  ASSERT_TRUE(WaitFor([&] { return run.OutputSoFar().find("listen") != std::string::npos; }, 20s))
      << run.OutputSoFar();
  std::set<std::string> inodes = SocketInodes(token);
  EXPECT_FALSE(inodes.empty()) << "the command's sockets are found from outside";
  EXPECT_FALSE(ListeningInHostNetwork(inodes)) << "the command listens in the host's network";
  const Outcome& outcome = run.Wait();
  EXPECT_EQ(outcome.exit_code, 0) << outcome.Describe();
  EXPECT_EQ(outcome.out, "udp 1\nfastopen 1\nlisten 1\n") << outcome.Describe();
  EXPECT_FALSE(udp.GotSomething()) << "a datagram reached the host's listener";
  EXPECT_FALSE(other.GotSomething()) << "a fast-open send connected to another port";
}

// The host's network holds the host's abstract unix names: a name bound
// inside would be taken from the host's daemons (the host's own bind then
// fails) and would take datagrams the host's processes send to it, which
// Landlock's scope does not cover. Judged outside: the host binds the name
// while the command runs, and no datagram of the host's reaches the command.
TEST_F(AllowPort, NoAbstractUnixNameOfTheHostIsTaken) {
  Listener allowed = Listener::Tcp();
  const std::string name = RandomToken("corral-allow-port-squat");
  Process run(RunArgv({"--allow-port", std::to_string(allowed.port())},
                      {"/usr/bin/python3", "-c",
                       "import socket, sys\n"
                       "s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)\n"
                       "try:\n"
                       "    s.bind('\\0' + sys.argv[1]); print('bound', flush=True)\n"
                       "except OSError as e: print('bind', e.errno, flush=True); sys.exit(0)\n"
                       "s.settimeout(5)\n"
                       "try: print('got', s.recv(100).decode(), flush=True)\n"
                       "except OSError: print('nothing', flush=True)\n",
                       name}),
              Defaults({}));
  ASSERT_TRUE(WaitFor([&] { return run.OutputSoFar().find("bind") != std::string::npos ||
                                   run.OutputSoFar().find("bound") != std::string::npos; },
                      20s))
      << run.OutputSoFar();
  int host = ::socket(AF_UNIX, SOCK_DGRAM, 0);
  ASSERT_GE(host, 0);
  struct sockaddr_un address = {};
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path + 1, name.data(), name.size());
  const socklen_t length = static_cast<socklen_t>(offsetof(struct sockaddr_un, sun_path) + 1 + name.size());
  EXPECT_EQ(::bind(host, reinterpret_cast<struct sockaddr*>(&address), length), 0)
      << "the command holds the host's abstract name: " << std::strerror(errno);
  ::close(host);
  int sender = ::socket(AF_UNIX, SOCK_DGRAM, 0);
  ASSERT_GE(sender, 0);
  const std::string secret = "from-the-host";
  (void)::sendto(sender, secret.data(), secret.size(), 0, reinterpret_cast<struct sockaddr*>(&address), length);
  ::close(sender);
  const Outcome& outcome = run.Wait();
  EXPECT_EQ(outcome.exit_code, 0) << outcome.Describe();
  EXPECT_EQ(outcome.out, "bind 1\n") << outcome.Describe();
  EXPECT_EQ(outcome.out.find(secret), std::string::npos) << "a host's datagram reached the command";
}

// An unbound unix socket that passes credentials is given an abstract name
// by the kernel at its first send or connect (autobind), in the host's
// network, where any host process finds it in /proc/net/unix and can send
// to it. Judged outside: the sockets the command holds, found through its
// /proc/PID/fd, have no name in the host's /proc/net/unix.
TEST_F(AllowPort, NoAbstractNameIsAutoboundForCredentialPassing) {
  Listener allowed = Listener::Tcp();
  const std::string token = RandomToken("corral-passcred");
  Process run(RunArgv({"--allow-port", std::to_string(allowed.port())},
                      {"/usr/bin/python3", "-c",
                       "import os, socket, sys, time\n"
                       "held = []\n"
                       "for kind, option in ((socket.SOCK_DGRAM, 16), (socket.SOCK_DGRAM, 76), (socket.SOCK_STREAM, 16)):\n"
                       "    s = socket.socket(socket.AF_UNIX, kind); held.append(s)\n"
                       "    try: s.setsockopt(socket.SOL_SOCKET, option, 1); print('set', option, flush=True)\n"
                       "    except OSError as e: print('refused', option, e.errno, flush=True)\n"
                       "    try:\n"
                       "        if kind == socket.SOCK_DGRAM: s.sendto(b'x', '\\0' + sys.argv[1] + '-nobody')\n"
                       "        else: s.connect('\\0' + sys.argv[1] + '-nobody')\n"
                       "    except OSError: pass\n"
                       "print('ready', flush=True)\n"
                       "while not os.path.exists('done'): time.sleep(0.05)\n",
                       token}),
              Defaults({}));
  ASSERT_TRUE(WaitFor([&] { return run.OutputSoFar().find("ready") != std::string::npos; }, 20s))
      << run.OutputSoFar();
  const std::set<std::string> inodes = SocketInodes(token);
  const std::vector<std::string> names = UnixNamesInHostNetwork(inodes);
  { std::ofstream done(workspace_.path() + "/done"); }
  const Outcome& outcome = run.Wait();
  EXPECT_EQ(outcome.exit_code, 0) << outcome.Describe();
  EXPECT_GE(names.size(), 3u) << "the command's three unix sockets were not all found in /proc/net/unix";
  for (const std::string& name : names) {
    EXPECT_EQ(name, "") << "a socket of the command has a name of the host's network: " << outcome.Describe();
  }
  EXPECT_EQ(outcome.out, "refused 16 1\nrefused 76 1\nrefused 16 1\nready\n") << outcome.Describe();
}

// Only the --allow-dns names (and localhost) resolve inside, at the
// addresses corral found outside; every other name fails at once.
TEST_F(AllowPort, OnlyTheAllowedNamesResolve) {
  const std::string name = HostsFileName();
  ASSERT_FALSE(name.empty()) << "this test needs a name besides localhost in the host's /etc/hosts";
  Listener allowed = Listener::Tcp();
  Outcome outcome = RunIn({"--allow-port", std::to_string(allowed.port()), "--allow-dns", name},
                          {"/bin/sh", "-c",
                           "getent hosts " + name + " | wc -l; getent hosts localhost >/dev/null && echo localhost; "
                           "for other in example.com corral.invalid; do getent ahosts $other || echo no $other; done"});
  EXPECT_EQ(outcome.exit_code, 0) << outcome.Describe();
  EXPECT_EQ(outcome.out, "1\nlocalhost\nno example.com\nno corral.invalid\n") << outcome.Describe();
  EXPECT_LT(outcome.elapsed, 5s) << "a refused lookup waits on nothing";

  Outcome unlisted = RunIn({"--allow-port", std::to_string(allowed.port())}, {"getent", "hosts", name});
  EXPECT_EQ(unlisted.exit_code, 2) << "without --allow-dns the host's names are not there either: "
                                   << unlisted.Describe();
}

TEST_F(AllowPort, ContradictoryOrUnresolvableRulesAreRefusedAndNothingRuns) {
  for (const std::vector<std::string>& rules :
       std::vector<std::vector<std::string>>{{"--allow-port", "443", "--allow-host", "example.com"},
                                             {"--allow-port", "443", "--allow-local", "5432"},
                                             {"--allow-port", "443", "--network", "all"},
                                             {"--allow-port", "0"},
                                             {"--allow-dns", "example.com"},
                                             {"--allow-port", "443", "--allow-dns", "*.example.com"},
                                             {"--allow-port", "443", "--allow-dns", "corral.invalid"}}) {
    Outcome outcome = RunIn(rules, {"/bin/sh", "-c", "touch ran"});
    EXPECT_NE(outcome.exit_code, 0) << outcome.Describe();
    EXPECT_NE(outcome.err.find("--allow-"), std::string::npos) << outcome.Describe();
    EXPECT_FALSE(std::filesystem::exists(workspace_.path() + "/ran")) << outcome.Describe();
  }
}

}  // namespace
}  // namespace corral_it
