// --allow-host through a real sandbox: curl and Python inside reach an HTTP
// server in the test process (the host side) only through corral's proxy,
// and only where the rules say. Every refusal is judged at that server: it
// saw no connection. The server answers every request with "hello", and
// "localhost" is the name the rules allow: the proxy resolves it outside,
// to 127.0.0.1, which only --allow-private 127.0.0.1/32 lets it connect to.
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <functional>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "confine/env.h"
#include "confine/host.h"
#include "confine/plan.h"
#include "exec/spawn.h"
#include "approval_channel.h"
#include "harness.h"
#include "loopback_names.h"
#include "policy/policy.h"
#include "policy/roots.h"

namespace corral_it {
namespace {

class HttpServer {
 public:
  HttpServer() {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in address = {};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 || ::listen(fd_, 64) != 0 ||
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
      ADD_FAILURE() << "cannot listen on 127.0.0.1";
    }
    port_ = ntohs(address.sin_port);
    thread_ = std::thread([this] { Serve(); });
  }
  ~HttpServer() {
    ::shutdown(fd_, SHUT_RDWR);
    thread_.join();
    ::close(fd_);
  }
  int port() const { return port_; }
  std::string authority(const std::string& host = "localhost") const { return host + ":" + std::to_string(port_); }
  int connections() const { return connections_; }

 private:
  void Serve() {
    for (;;) {
      int client = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (client < 0) return;
      ++connections_;
      std::string request;
      char buffer[4096];
      struct pollfd p = {client, POLLIN, 0};
      while (request.find("\r\n\r\n") == std::string::npos && ::poll(&p, 1, 5000) == 1) {
        ssize_t n = ::recv(client, buffer, sizeof buffer, 0);
        if (n <= 0) break;
        request.append(buffer, static_cast<size_t>(n));
      }
      const std::string reply = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello";
      (void)!::send(client, reply.data(), reply.size(), MSG_NOSIGNAL);
      ::close(client);
    }
  }

  int fd_ = -1;
  int port_ = 0;
  std::atomic<int> connections_ = 0;
  std::thread thread_;
};

class Egress : public SandboxTest {
 protected:
  // The rules that let the sandbox reach `server` as localhost.
  static std::vector<std::string> Allowing(const HttpServer& server) {
    return {"--allow-host", server.authority(), "--allow-private", "127.0.0.1/32"};
  }
  Outcome Shell(const std::vector<std::string>& rules, const std::string& script) {
    return RunIn(rules, {"/bin/sh", "-c", script});
  }
};

TEST_F(Egress, CurlReachesAnAllowedHostThroughConnectPlainHttpAndSocks5) {
  HttpServer server;
  const std::string url = "http://" + server.authority() + "/";
  Outcome outcome = Shell(Allowing(server), "curl -sS " + url + "; echo; curl -sS --proxytunnel " + url +
                                                "; echo; curl -sS --proxy \"$ALL_PROXY\" " + url);
  EXPECT_EQ(outcome.exit_code, 0) << outcome.Describe();
  EXPECT_EQ(outcome.out, "hello\nhello\nhello") << outcome.Describe();
  EXPECT_EQ(server.connections(), 3);
  std::vector<nlohmann::json> records = AuditEvents("egress");
  ASSERT_EQ(records.size(), 3u) << outcome.Describe();
  std::set<std::string> protocols;
  for (const nlohmann::json& record : records) {
    EXPECT_EQ(record["verdict"], "allowed") << record.dump();
    EXPECT_EQ(record["host"], "localhost") << record.dump();
    EXPECT_EQ(record["address"], "127.0.0.1") << record.dump();
    EXPECT_GT(record["received"].get<int64_t>(), 0) << record.dump();
    EXPECT_EQ(record.dump().find("GET"), std::string::npos) << "no request line in the trail: " << record.dump();
    protocols.insert(record["protocol"].get<std::string>());
  }
  EXPECT_EQ(protocols, (std::set<std::string>{"http", "connect", "socks5"}));
}

TEST_F(Egress, APythonClientReachesAnAllowedHostThroughTheProxyVariables) {
  HttpServer server;
  Outcome outcome = RunIn(Allowing(server), {"/usr/bin/python3", "-c",
                                             "import urllib.request,sys; sys.stdout.write(urllib.request.urlopen('http://" +
                                                 server.authority() + "/').read().decode())"});
  EXPECT_EQ(outcome.exit_code, 0) << outcome.Describe();
  EXPECT_EQ(outcome.out, "hello") << outcome.Describe();
  EXPECT_EQ(server.connections(), 1);
}

TEST_F(Egress, AHostNotAllowedGets403WithTheReasonAndTheStderrLine) {
  HttpServer server;
  const std::string denied = "denied.test:" + std::to_string(server.port());
  Outcome outcome = Shell(Allowing(server), "curl -sS -w '%{http_code}' http://" + denied + "/");
  EXPECT_EQ(outcome.out, "corral: blocked connection to " + denied + ": not in --allow-host\n403") << outcome.Describe();
  EXPECT_NE(outcome.err.find("corral: blocked connection to " + denied + ": not in --allow-host\n"), std::string::npos)
      << outcome.Describe();
  EXPECT_EQ(server.connections(), 0);
  std::vector<nlohmann::json> records = AuditEvents("egress");
  ASSERT_EQ(records.size(), 1u) << outcome.Describe();
  EXPECT_EQ(records[0]["verdict"], "denied");
  EXPECT_EQ(records[0]["rule"], "not in --allow-host");
}

// A command cannot flood the trail or stderr with refusals: the same one is
// written once, then counted.
TEST_F(Egress, ARepeatedRefusalIsWrittenOnceAndCounted) {
  HttpServer server;
  const std::string denied = "denied.test:" + std::to_string(server.port());
  Outcome outcome = Shell(Allowing(server), "for i in 1 2 3 4 5 6 7 8 9 10; do curl -s http://" + denied +
                                                "/ >/dev/null; done; printf 'GET / HTTP/1.1\\n\\n' | "
                                                "/usr/bin/python3 -c \"import socket,sys; s=socket.create_connection(("
                                                "'127.0.0.1', 3128)); s.sendall(sys.stdin.buffer.read()); s.recv(99)\"");
  size_t lines = 0;
  for (size_t at = outcome.err.find("blocked connection to " + denied); at != std::string::npos;
       at = outcome.err.find("blocked connection to " + denied, at + 1)) {
    ++lines;
  }
  EXPECT_EQ(lines, 1u) << outcome.Describe();
  EXPECT_NE(outcome.err.find("corral: 9 more blocked connections left off stderr"), std::string::npos)
      << outcome.Describe();
  std::vector<nlohmann::json> records = AuditEvents("egress");
  ASSERT_EQ(records.size(), 3u) << outcome.Describe();
  EXPECT_FALSE(records[0].contains("repeated"));
  EXPECT_EQ(records[1]["rule"].get<std::string>().rfind("malformed request: http request: ", 0), 0u) << records[1];
  EXPECT_EQ(records[2]["repeated"], 9) << records[2];
  EXPECT_EQ(server.connections(), 0);
}

// The proxy never waits for the trail: with `--audit -` and a stderr pipe
// nobody reads (one page, full after a few records), a command still gets
// every one of many connections served, judged at the server, and the
// records come once the pipe is read.
TEST_F(Egress, AStalledTrailNeverStallsTheProxy) {
  HttpServer server;
  int fds[2];
  ASSERT_EQ(::pipe2(fds, O_CLOEXEC), 0);
  (void)::fcntl(fds[1], F_SETPIPE_SZ, 4096);
  constexpr int kConnections = 150;
  std::vector<std::string> argv =
      RunArgv(Allowing(server), {"/usr/bin/python3", "-c",
                                 "import urllib.request\nfor i in range(" + std::to_string(kConnections) +
                                     "): urllib.request.urlopen('http://" + server.authority() +
                                     "/', timeout=60).read()\nopen('served', 'w').close()"});
  argv[3] = "-";  // --audit -: the trail goes to the stalled stderr
  SpawnOptions options = Defaults({});
  options.stderr_fd = fds[1];
  Process run(argv, options);
  ::close(fds[1]);
  const bool served = WaitFor([&] { return std::filesystem::exists(workspace_.path() + "/served"); }, 30s);
  const int connections = server.connections();
  std::string trail;
  std::thread reader([&] {
    char buffer[4096];
    for (ssize_t n; (n = ::read(fds[0], buffer, sizeof buffer)) > 0;) trail.append(buffer, static_cast<size_t>(n));
  });
  const Outcome& outcome = run.Wait();
  reader.join();
  ::close(fds[0]);
  EXPECT_TRUE(served) << "the command's connections stalled behind the trail; " << connections << " served";
  EXPECT_EQ(server.connections(), kConnections);
  EXPECT_EQ(outcome.exit_code, 0) << outcome.Describe();
  size_t records = 0;
  for (size_t at = trail.find("\"event\":\"egress\""); at != std::string::npos;
       at = trail.find("\"event\":\"egress\"", at + 1)) {
    ++records;
  }
  EXPECT_EQ(records, static_cast<size_t>(kConnections)) << trail.substr(0, 2000);
}

TEST_F(Egress, ADeniedPortADenyRuleAndAHostHeaderThatDisagreesAllFail) {
  HttpServer server;
  std::vector<std::string> rules = Allowing(server);
  rules.insert(rules.end(), {"--allow-host", "also.test:" + std::to_string(server.port()), "--deny-host", "also.test"});
  Outcome outcome = Shell(rules, "curl -sS http://localhost:1/; echo; curl -sS http://also." "test:" +
                                     std::to_string(server.port()) + "/; echo; curl -sS -H 'Host: elsewhere.test' http://" +
                                     server.authority() + "/");
  EXPECT_NE(outcome.out.find("blocked connection to localhost:1: not in --allow-host"), std::string::npos)
      << outcome.Describe();
  EXPECT_NE(outcome.out.find("blocked connection to also.test:" + std::to_string(server.port()) +
                             ": --deny-host also.test"),
            std::string::npos)
      << outcome.Describe();
  EXPECT_NE(outcome.out.find("corral: http request: "), std::string::npos) << outcome.Describe();
  EXPECT_EQ(server.connections(), 0);
}

// The proxy is the only way out: a client that goes around it has no route.
TEST_F(Egress, DirectConnectionsAndNoProxyFail) {
  HttpServer server;
  Outcome outcome = Shell(Allowing(server), "curl -sS --noproxy '*' http://" + server.authority() +
                                                "/ || echo noproxy-failed; curl -sS --noproxy '*' http://127.0.0.1:" +
                                                std::to_string(server.port()) + "/ || echo direct-failed");
  EXPECT_NE(outcome.out.find("noproxy-failed"), std::string::npos) << outcome.Describe();
  EXPECT_NE(outcome.out.find("direct-failed"), std::string::npos) << outcome.Describe();
  EXPECT_EQ(server.connections(), 0);
}

// Names resolve outside, and an address in a private range is refused even
// for an allowed name, unless --allow-private names it.
TEST_F(Egress, AnAllowedNameThatResolvesToTheHostsLoopbackIsRefused) {
  HttpServer server;
  Outcome outcome = Shell({"--allow-host", server.authority()}, "curl -sS http://" + server.authority() + "/");
  EXPECT_NE(outcome.out.find("corral: blocked connection to " + server.authority() + ": "), std::string::npos)
      << outcome.Describe();
  EXPECT_NE(outcome.out.find("loopback"), std::string::npos) << outcome.Describe();
  EXPECT_EQ(server.connections(), 0);
}

// The proxy listens in the sandbox's namespace alone: while a run is on, a
// host process finds nothing on 127.0.0.1:3128 or :1080 (and were something
// of the host's own there, it would not be corral).
TEST_F(Egress, AProcessOnTheHostCannotReachTheProxy) {
  HttpServer server;
  std::vector<std::string> argv = RunArgv(Allowing(server), {"/bin/sh", "-c", "touch started; sleep 2"});
  Process run(argv, Defaults({}));
  ASSERT_TRUE(WaitFor([&] { return std::filesystem::exists(workspace_.path() + "/started"); }, 10s));
  for (int port : {3128, 1080}) {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in address = {};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = htons(static_cast<uint16_t>(port));
    int connected = ::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address);
    int error = errno;
    ::close(fd);
    EXPECT_NE(connected, 0) << "something on the host's 127.0.0.1:" << port;
    EXPECT_EQ(error, ECONNREFUSED);
  }
  const Outcome& outcome = run.Wait();
  EXPECT_EQ(outcome.exit_code, 0) << outcome.Describe();
}

// --allow-local: one port of the host's loopback at the same port inside,
// and nothing else of it; no --allow-host needed.
TEST_F(Egress, AllowLocalReachesExactlyThatPortOfTheHostsLoopback) {
  HttpServer server;
  HttpServer other;
  const std::string port = std::to_string(server.port());
  Outcome outcome = Shell({"--allow-local", port}, "curl -sS http://127.0.0.1:" + port +
                                                       "/; echo; curl -sS http://127.0.0.1:" +
                                                       std::to_string(other.port()) + "/ || echo other-failed");
  EXPECT_EQ(outcome.out.rfind("hello\n", 0), 0u) << outcome.Describe();
  EXPECT_NE(outcome.out.find("other-failed"), std::string::npos) << outcome.Describe();
  EXPECT_EQ(server.connections(), 1);
  EXPECT_EQ(other.connections(), 0);
  std::vector<nlohmann::json> records = AuditEvents("egress");
  ASSERT_EQ(records.size(), 1u) << outcome.Describe();
  EXPECT_EQ(records[0]["protocol"], "local");
  EXPECT_EQ(records[0]["rule"], "--allow-local " + port);
  EXPECT_GT(records[0]["received"].get<int64_t>(), 0);
}

// A program that ignores the proxy variables (a raw Python socket) reaches
// an allowed name on its allowed port, through the synthetic address the
// sandbox's name server gave it and corral's capture, and nothing else: the
// same address on another captured port is reset (the name is not allowed
// there), 127.0.0.1 on a captured port is reset, an unlisted name gets
// NXDOMAIN and AAAA gets no address. Judged at the servers: only the
// allowed one saw a connection.
TEST_F(Egress, AProxyUnawareClientReachesAnAllowedNameAndNothingElse) {
  const std::string name = LoopbackHostsName();
  ASSERT_FALSE(name.empty()) << "this test needs a name for 127.0.0.1 besides localhost in the host's /etc/hosts";
  HttpServer server;
  HttpServer other;
  const std::string port = std::to_string(server.port());
  const std::string other_port = std::to_string(other.port());
  Outcome outcome = RunIn(
      {"--allow-host", name + ":" + port, "--allow-host", "also.test:" + other_port, "--allow-private",
       "127.0.0.1/32"},
      {"/usr/bin/python3", "-c",
       "import socket, sys\n"
       "name, port, other = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])\n"
       "def get(host, p):\n"
       "    try:\n"
       "        s = socket.create_connection((host, p), timeout=10)\n"
       "        s.sendall(b'GET / HTTP/1.0\\r\\nHost: x\\r\\n\\r\\n')\n"
       "        data = b''\n"
       "        while True:\n"
       "            chunk = s.recv(4096)\n"
       "            if not chunk: break\n"
       "            data += chunk\n"
       "        print('got', data.split(b'\\r\\n\\r\\n')[-1].decode() or 'nothing')\n"
       "    except OSError as e: print('failed', type(e).__name__)\n"
       "address = socket.gethostbyname(name)\n"
       "print('synthetic', address.startswith('127.77.'))\n"
       "get(name, port)\n"
       "get(address, other)\n"
       "get('127.0.0.1', port)\n"
       "try: socket.gethostbyname('denied.test'); print('denied.test resolved')\n"
       "except socket.gaierror: print('nxdomain')\n"
       "try: print('aaaa', socket.getaddrinfo(name, port, socket.AF_INET6))\n"
       "except socket.gaierror: print('no aaaa')\n",
       name, port, other_port});
  EXPECT_EQ(outcome.exit_code, 0) << outcome.Describe();
  EXPECT_EQ(outcome.out,
            "synthetic True\ngot hello\nfailed ConnectionResetError\nfailed ConnectionResetError\nnxdomain\nno aaaa\n")
      << outcome.Describe();
  EXPECT_EQ(server.connections(), 1);
  EXPECT_EQ(other.connections(), 0);
  EXPECT_NE(outcome.err.find("corral: blocked connection to " + name + ":" + other_port + ": not in --allow-host"),
            std::string::npos)
      << outcome.Describe();
  std::vector<nlohmann::json> records = AuditEvents("egress");
  ASSERT_EQ(records.size(), 3u) << outcome.Describe();
  size_t allowed = 0;
  for (const nlohmann::json& record : records) {
    EXPECT_EQ(record["protocol"], "transparent") << record.dump();
    if (record["verdict"] == "allowed") {
      ++allowed;
      EXPECT_EQ(record["host"], name);
      EXPECT_EQ(record["port"], server.port());
      EXPECT_EQ(record["address"], "127.0.0.1");
    }
  }
  EXPECT_EQ(allowed, 1u);
}

TEST_F(Egress, OverBroadAndContradictoryRulesAreRefusedAndNothingRuns) {
  for (const std::vector<std::string>& rules :
       std::vector<std::vector<std::string>>{{"--allow-host", "*.com"},
                                             {"--allow-host", "*"},
                                             {"--allow-host", "*.co.uk"},
                                             {"--allow-host", "0.0.0.0/0"},
                                             {"--allow-host", "example.com", "--network", "all"},
                                             {"--allow-private", "127.0.0.1/32"},
                                             {"--allow-local", "3128"},
                                             {"--allow-local", "5432", "--network", "all"}}) {
    Outcome outcome = RunIn(rules, {"/bin/sh", "-c", "touch ran"});
    EXPECT_EQ(outcome.exit_code, 64) << outcome.Describe();
    EXPECT_FALSE(std::filesystem::exists(workspace_.path() + "/ran")) << outcome.Describe();
  }
}

// The proxy serves before the command can run: Spawn hands the listeners to
// Command::serve_egress while the sandbox's init waits for its go, so a
// proxy that cannot start stops the run with its own error and the command
// never exists (judged outside: its file is absent, and was absent while
// the proxy was starting).
TEST(EgressSpawn, AProxyThatCannotStartStopsTheRunBeforeTheCommandExists) {
  TempDir workspace("corral-ws");
  corral::Result<corral::HostContext> host = corral::CaptureHostContext();
  ASSERT_TRUE(host.ok()) << host.error().ToString();
  corral::PolicyBuilder builder(*host);
  builder.Workspace(workspace.path()).AllowHost("localhost:80").AllowPrivate("127.0.0.1/32");
  corral::Result<corral::Policy> policy = builder.Build();
  ASSERT_TRUE(policy.ok()) << policy.error().ToString();
  corral::Result<corral::Plan> plan = corral::Compile(*policy, corral::ProbeHost());
  ASSERT_TRUE(plan.ok()) << plan.error().ToString();

  const std::string ran = workspace / "ran";
  corral::Command command;
  command.argv = {"/usr/bin/touch", ran};
  command.env = corral::ScrubEnvironment(*policy, environ);
  bool served = false;
  bool ran_while_starting = false;
  command.serve_egress = [&](corral::EgressListeners listeners) -> corral::Result<void> {
    served = static_cast<bool>(listeners.http) && static_cast<bool>(listeners.socks);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // a command not held back has run by now
    ran_while_starting = Exists(ran);
    return corral::Error(corral::ErrorKind::kInternal, "the test's proxy does not start");
  };
  sigset_t previous = corral::BlockForwardedSignals();
  corral::Result<corral::SandboxProcess> process = corral::Spawn(*plan, command);
  if (process.ok()) process->Reap();
  ::pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  EXPECT_TRUE(served) << "Spawn handed over the proxy's listeners";
  EXPECT_FALSE(ran_while_starting) << "the command ran before the proxy was serving";
  EXPECT_FALSE(Exists(ran)) << "the command ran although the proxy did not start";
  ASSERT_FALSE(process.ok()) << "Spawn went on without the proxy";
  EXPECT_EQ(process.error().message(), "the test's proxy does not start") << process.error().ToString();

  // A hook that starts: the command runs, after it (a fresh plan: the one
  // spawned holds a tree its sandbox took).
  plan = corral::Compile(*policy, corral::ProbeHost());
  ASSERT_TRUE(plan.ok()) << plan.error().ToString();
  command.serve_egress = [&](corral::EgressListeners) -> corral::Result<void> {
    ran_while_starting = Exists(ran);
    return {};
  };
  previous = corral::BlockForwardedSignals();
  process = corral::Spawn(*plan, command);
  ASSERT_TRUE(process.ok()) << process.error().ToString();
  process->Reap();
  ::pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  EXPECT_FALSE(ran_while_starting);
  EXPECT_TRUE(Exists(ran));
}

// Network approval on demand (docs/network.md): under --allow-host and an
// approval policy that asks, a connection to a place no rule names is held
// and asked about on the --approval-fd channel. The rules allow localhost on
// port 1 only, so localhost on the server's port is not listed; every
// refusal is judged at the server (it saw no connection) and every "never
// asked" at the harness's end of the channel.
class NetworkApproval : public Egress {
 protected:
  std::vector<std::string> AskingArgv(Channel& channel, const std::vector<std::string>& command,
                                      const std::vector<std::string>& more = {}) {
    std::vector<std::string> flags = {"--approval",    "ask-dangerous", "--approval-fd",   channel.corral_fd(),
                                      "--allow-host",  "localhost:1",   "--allow-private", "127.0.0.1/32"};
    flags.insert(flags.end(), more.begin(), more.end());
    return RunArgv(flags, command);
  }

  // Runs `argv`, answering an approval question (the command itself) with
  // allow-once and each network question with `answer(question)` (empty:
  // no answer); returns corral's outcome and the network questions.
  std::pair<Outcome, std::vector<nlohmann::json>> Serve(
      Channel& channel, const std::vector<std::string>& argv,
      const std::function<std::string(const nlohmann::json&)>& answer) {
    Process process(argv, Defaults({}));
    channel.DropCorralsEnd();
    std::vector<nlohmann::json> network;
    while (channel.HarnessOpen()) {
      std::optional<nlohmann::json> request = channel.NextRequest();
      if (!request) break;
      if ((*request)["kind"] != "network") {
        channel.Answer(*request, "allow-once");
        continue;
      }
      network.push_back(*request);
      std::string given = answer(*request);
      if (!given.empty()) channel.Answer(*request, given);
    }
    return {process.Wait(), network};
  }

  static std::string Curl(const std::string& authority) {
    return "curl -sS -w ' %{http_code}' http://" + authority + "/; echo";
  }
};

TEST_F(NetworkApproval, AllowedOnTheChannelTheServerGetsTheConnection) {
  HttpServer server;
  Channel channel;
  auto [outcome, questions] =
      Serve(channel, AskingArgv(channel, {"/bin/sh", "-c", Curl(server.authority())}),
            [](const nlohmann::json&) { return "allow-once"; });
  EXPECT_EQ(outcome.exit_code, 0) << outcome.Describe();
  EXPECT_EQ(outcome.out, "hello 200\n") << outcome.Describe();
  EXPECT_EQ(server.connections(), 1);
  ASSERT_EQ(questions.size(), 1u) << outcome.Describe();
  EXPECT_EQ(questions[0]["host"], "localhost");
  EXPECT_EQ(questions[0]["port"], server.port());
  EXPECT_EQ(questions[0]["class"], "network:" + server.authority());
  EXPECT_EQ(questions[0]["answers"], nlohmann::json({"allow-once", "allow-for-run", "deny"}));
  std::vector<nlohmann::json> records = AuditEvents("egress");
  ASSERT_EQ(records.size(), 1u) << outcome.Describe();
  EXPECT_EQ(records[0]["verdict"], "allowed");
  EXPECT_EQ(records[0]["answered_by"], "the approval channel");
  EXPECT_EQ(records[0]["scope"], "connection");
}

// Denied, unanswered within --network-approval-timeout, or the harness gone:
// the server saw nothing, and the command got a 403 naming why.
TEST_F(NetworkApproval, DeniedUnansweredOrNoChannelTheServerSeesNothing) {
  struct Case {
    std::string answer;
    bool close_channel;
    std::string why;
  };
  for (const Case& c : {Case{"deny", false, "denied by the approval channel"},
                        Case{"", false, "no answer"}, Case{"", true, "nobody could answer"}}) {
    HttpServer server;
    Channel channel;
    auto [outcome, questions] =
        Serve(channel, AskingArgv(channel, {"/bin/sh", "-c", Curl(server.authority())}, {"--network-approval-timeout", "2"}),
              [&](const nlohmann::json&) {
                if (c.close_channel) channel.CloseHarness();
                return c.answer;
              });
    EXPECT_EQ(server.connections(), 0) << c.why;
    EXPECT_NE(outcome.out.find(" 403"), std::string::npos) << outcome.Describe();
    EXPECT_NE(outcome.err.find("corral: blocked connection to " + server.authority() + ": not in --allow-host; "),
              std::string::npos)
        << outcome.Describe();
    std::vector<nlohmann::json> records = AuditEvents("egress");
    ASSERT_EQ(records.size(), 1u) << outcome.Describe();
    EXPECT_EQ(records[0]["verdict"], "denied");
    EXPECT_NE(records[0]["rule"].get<std::string>().find(c.why), std::string::npos) << records[0];
  }
}

TEST_F(NetworkApproval, ForTheRunCoversTheSamePlaceAgainButNotAnotherPort) {
  HttpServer server;
  HttpServer other;
  Channel channel;
  auto [outcome, questions] = Serve(
      channel,
      AskingArgv(channel, {"/bin/sh", "-c", Curl(server.authority()) + "; " + Curl(server.authority()) + "; " +
                                                Curl(other.authority())}),
      [&](const nlohmann::json& question) {
        return question["port"] == server.port() ? "allow-for-run" : "deny";
      });
  EXPECT_EQ(outcome.out.substr(0, 20), "hello 200\nhello 200\n") << outcome.Describe();
  EXPECT_EQ(server.connections(), 2);
  EXPECT_EQ(other.connections(), 0);
  ASSERT_EQ(questions.size(), 2u) << outcome.Describe();
  EXPECT_EQ(questions[0]["port"], server.port());
  EXPECT_EQ(questions[1]["port"], other.port());
  std::vector<nlohmann::json> records = AuditEvents("egress");
  ASSERT_EQ(records.size(), 3u) << outcome.Describe();
  EXPECT_EQ(records[0]["scope"], "run");
  EXPECT_EQ(records[1]["scope"], "run");
  EXPECT_EQ(records[2]["verdict"], "denied");
}

// The deny list and corral's own refusals win over any answer: never asked.
TEST_F(NetworkApproval, ADeniedHostOrARefusedAddressIsNeverAsked) {
  HttpServer server;
  Channel channel;
  const std::string metadata = "169.254.169.254:" + std::to_string(server.port());
  auto [outcome, questions] =
      Serve(channel,
            AskingArgv(channel, {"/bin/sh", "-c", Curl(server.authority()) + "; " + Curl(metadata)},
                       {"--deny-host", "localhost"}),
            [](const nlohmann::json&) { return "allow-once"; });
  EXPECT_EQ(questions.size(), 0u) << questions.front().dump();
  EXPECT_EQ(server.connections(), 0);
  EXPECT_NE(outcome.err.find(server.authority() + ": --deny-host localhost"), std::string::npos) << outcome.Describe();
  EXPECT_NE(outcome.err.find("corral: blocked connection to " + metadata), std::string::npos) << outcome.Describe();
}

// Allowed for the session: recorded in the session log, and the next run of
// the session reaches the place without a question.
TEST_F(NetworkApproval, ForTheSessionIsAskedOnceForTheWholeSession) {
  Outcome created = Corral({"session", "new", "--cwd", workspace_.path()});
  ASSERT_EQ(created.exit_code, 0) << created.Describe();
  const std::string id = created.out.substr(0, created.out.find('\n'));
  HttpServer server;
  Channel first;
  auto [outcome, questions] =
      Serve(first, AskingArgv(first, {"/bin/sh", "-c", Curl(server.authority())}, {"--session", id}),
            [](const nlohmann::json&) { return "allow-for-session"; });
  EXPECT_EQ(outcome.out, "hello 200\n") << outcome.Describe();
  ASSERT_EQ(questions.size(), 1u);
  EXPECT_EQ(questions[0]["answers"], nlohmann::json({"allow-once", "allow-for-run", "allow-for-session", "deny"}));
  std::string log = ReadFile(state_ / ("corral/sessions/" + id + ".jsonl")).value_or("");
  EXPECT_NE(log.find("\"class\":\"network:" + server.authority() + "\""), std::string::npos) << log;

  Channel second;
  auto [again, asked] =
      Serve(second, AskingArgv(second, {"/bin/sh", "-c", Curl(server.authority())}, {"--session", id}),
            [](const nlohmann::json&) { return "deny"; });
  EXPECT_EQ(again.out, "hello 200\n") << again.Describe();
  EXPECT_EQ(asked.size(), 0u);
  EXPECT_EQ(server.connections(), 2);
  std::vector<nlohmann::json> records = AuditEvents("egress");
  ASSERT_FALSE(records.empty());
  EXPECT_EQ(records.back()["answered_by"], "the session log");
  EXPECT_EQ(records.back()["scope"], "session");
}

}  // namespace
}  // namespace corral_it
