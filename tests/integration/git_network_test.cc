// git through --allow-host: a clone over HTTP (through corral's proxy, which
// git reaches through the proxy variables) and over an SSH stand-in (through
// transparent capture: the "ssh" program is a shim that connects to the
// name itself, as ssh would) from servers in the test process, behind an
// allowed name; the same clones from a name not allowed fail, and the
// servers saw nothing of them.
//
// The SSH stand-in: no sshd is packaged here cheaply, so the host side is a
// plain TCP server that reads the command line git's ssh would run remotely
// ("git-upload-pack '/repo.git'") and runs `git upload-pack` on the bare
// repository with the connection as its input and output; GIT_SSH_COMMAND
// is a Python shim that sends that line, then relays. What is proven is the
// network path (name server, capture, rules, proxy), which real ssh takes
// the same way; ssh's own protocol is not exercised.
#include <netinet/in.h>
#include <poll.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "harness.h"
#include "loopback_names.h"

extern char** environ;

namespace corral_it {
namespace {

// A listening socket on 127.0.0.1, an ephemeral port.
int ListenOnLoopback(int* port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_in address = {};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 || ::listen(fd, 64) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    ADD_FAILURE() << "cannot listen on 127.0.0.1";
  }
  *port = ntohs(address.sin_port);
  return fd;
}

// Reads up to the end of the line or head `end`, waiting at most 5 s.
std::string ReadUntil(int fd, const std::string& end) {
  std::string text;
  char c;
  struct pollfd p = {fd, POLLIN, 0};
  while (text.size() < 65536 && (text.size() < end.size() || text.compare(text.size() - end.size(), end.size(), end) != 0)) {
    if (::poll(&p, 1, 5000) != 1 || ::recv(fd, &c, 1, 0) != 1) break;
    text.push_back(c);
  }
  return text;
}

// Serves the files under `root` over HTTP/1.0 (git's dumb protocol): GET
// only, the query string ignored, 404 for anything else.
class FileServer {
 public:
  explicit FileServer(std::string root) : root_(std::move(root)) {
    fd_ = ListenOnLoopback(&port_);
    thread_ = std::thread([this] { Serve(); });
  }
  ~FileServer() {
    ::shutdown(fd_, SHUT_RDWR);
    thread_.join();
    ::close(fd_);
  }
  int port() const { return port_; }
  int connections() const { return connections_; }

 private:
  void Serve() {
    for (;;) {
      int client = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (client < 0) return;
      ++connections_;
      std::istringstream head(ReadUntil(client, "\r\n\r\n"));
      std::string method, target;
      head >> method >> target;
      target = target.substr(0, target.find('?'));
      std::string body;
      bool found = false;
      if (method == "GET" && target.find("..") == std::string::npos) {
        std::ifstream in(root_ + target, std::ios::binary);
        if (in && std::filesystem::is_regular_file(root_ + target)) {
          std::ostringstream bytes;
          bytes << in.rdbuf();
          body = bytes.str();
          found = true;
        }
      }
      std::string reply = std::string(found ? "HTTP/1.0 200 OK" : "HTTP/1.0 404 Not Found") +
                          "\r\nContent-Type: application/octet-stream\r\nContent-Length: " +
                          std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
      size_t sent = 0;
      while (sent < reply.size()) {
        ssize_t n = ::send(client, reply.data() + sent, reply.size() - sent, MSG_NOSIGNAL);
        if (n <= 0) break;
        sent += static_cast<size_t>(n);
      }
      ::close(client);
    }
  }

  std::string root_;
  int fd_ = -1;
  int port_ = 0;
  std::atomic<int> connections_ = 0;
  std::thread thread_;
};

// The SSH stand-in: one command line, then `git upload-pack REPO` on the
// connection.
class UploadPackServer {
 public:
  explicit UploadPackServer(std::string repository) : repository_(std::move(repository)) {
    fd_ = ListenOnLoopback(&port_);
    thread_ = std::thread([this] { Serve(); });
  }
  ~UploadPackServer() {
    ::shutdown(fd_, SHUT_RDWR);
    thread_.join();
    ::close(fd_);
  }
  int port() const { return port_; }
  int connections() const { return connections_; }
  std::string last_command() const { return last_command_; }

 private:
  void Serve() {
    for (;;) {
      int client = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (client < 0) return;
      ++connections_;
      last_command_ = ReadUntil(client, "\n");
      posix_spawn_file_actions_t actions;
      posix_spawn_file_actions_init(&actions);
      posix_spawn_file_actions_adddup2(&actions, client, 0);
      posix_spawn_file_actions_adddup2(&actions, client, 1);
      std::vector<std::string> argv = {"/usr/bin/git", "upload-pack", repository_};
      std::vector<char*> args;
      for (std::string& arg : argv) args.push_back(arg.data());
      args.push_back(nullptr);
      pid_t pid = -1;
      if (::posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ) == 0) {
        int status = 0;
        ::waitpid(pid, &status, 0);
      }
      posix_spawn_file_actions_destroy(&actions);
      ::close(client);
    }
  }

  std::string repository_;
  int fd_ = -1;
  int port_ = 0;
  std::atomic<int> connections_ = 0;
  std::string last_command_;
  std::thread thread_;
};

constexpr char kShim[] =
    "import os, socket, sys, threading\n"
    "args = sys.argv[1:]\n"
    "port = 22\n"
    "while args and args[0].startswith('-'):\n"
    "    option = args.pop(0)\n"
    "    if option == '-p': port = int(args.pop(0))\n"
    "    elif option in ('-o', '-i', '-l'): args.pop(0)\n"
    "host, command = args[0], ' '.join(args[1:])\n"
    "s = socket.create_connection((host, port), timeout=30)\n"
    "s.settimeout(None)\n"
    "s.sendall(command.encode() + b'\\n')\n"
    "def up():\n"
    "    while True:\n"
    "        data = sys.stdin.buffer.read1(65536)\n"
    "        if not data: break\n"
    "        s.sendall(data)\n"
    "    s.shutdown(socket.SHUT_WR)\n"
    "threading.Thread(target=up, daemon=True).start()\n"
    "while True:\n"
    "    data = s.recv(65536)\n"
    "    if not data: break\n"
    "    sys.stdout.buffer.write(data); sys.stdout.buffer.flush()\n"
    "os._exit(0)\n";  // the reader of stdin may still be blocked: no interpreter shutdown

class GitNetwork : public SandboxTest {
 protected:
  void SetUp() override {
    name_ = LoopbackHostsName();
    ASSERT_FALSE(name_.empty()) << "this test needs a name for 127.0.0.1 besides localhost in the host's /etc/hosts";
    // A bare repository with one commit, ready for the dumb HTTP protocol.
    const std::string source = outside_ / "source";
    bare_ = outside_ / "served/repo.git";
    std::filesystem::create_directories(source);
    for (const std::vector<std::string>& args :
         std::vector<std::vector<std::string>>{{"-C", source, "init", "-q", "."},
                                               {"-C", source, "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q",
                                                "--allow-empty", "-m", "served over the network"},
                                               {"clone", "-q", "--bare", source, bare_},
                                               {"-C", bare_, "update-server-info"}}) {
      std::vector<std::string> argv = {"/usr/bin/git"};
      argv.insert(argv.end(), args.begin(), args.end());
      Outcome made = Execute(argv);
      ASSERT_EQ(made.exit_code, 0) << made.Describe();
    }
    std::ofstream(workspace_.path() + "/shim.py") << kShim;
  }

  // Clones URL into DIR inside, and prints the clone's one commit subject.
  Outcome Clone(const std::vector<std::string>& rules, const std::string& url, const std::string& dir) {
    return RunIn(rules, {"/bin/sh", "-c",
                         "GIT_SSH_COMMAND=\"/usr/bin/python3 $PWD/shim.py\" GIT_SSH_VARIANT=ssh GIT_TERMINAL_PROMPT=0 "
                         "git -c protocol.version=0 clone -q " + url + " " + dir +
                             " && git -C " + dir + " log --format=%s"});
  }

  std::string name_;
  std::string bare_;
};

TEST_F(GitNetwork, CloneOverHttpThroughTheProxyFromAnAllowedNameAndNotFromAnother) {
  FileServer server(outside_ / "served");
  const std::string port = std::to_string(server.port());
  const std::vector<std::string> rules = {"--allow-host", name_ + ":" + port, "--allow-private", "127.0.0.1/32"};
  Outcome outcome = Clone(rules, "http://" + name_ + ":" + port + "/repo.git", "clone");
  EXPECT_EQ(outcome.exit_code, 0) << outcome.Describe();
  EXPECT_EQ(outcome.out, "served over the network\n") << outcome.Describe();
  EXPECT_GT(server.connections(), 0);
  for (const nlohmann::json& record : AuditEvents("egress")) {
    EXPECT_EQ(record["verdict"], "allowed") << record.dump();
    EXPECT_EQ(record["protocol"], "http") << record.dump();
  }

  const int before = server.connections();
  Outcome denied = Clone(rules, "http://denied.test:" + port + "/repo.git", "other");
  EXPECT_NE(denied.exit_code, 0) << denied.Describe();
  EXPECT_NE(denied.err.find("corral: blocked connection to denied.test:" + port + ": not in --allow-host"),
            std::string::npos)
      << denied.Describe();
  EXPECT_EQ(server.connections(), before) << "the server saw the denied clone";
}

TEST_F(GitNetwork, CloneOverAnSshStandInThroughTransparentCaptureAndNotFromAnotherName) {
  UploadPackServer server(bare_);
  const std::string port = std::to_string(server.port());
  const std::vector<std::string> rules = {"--allow-host", name_ + ":" + port, "--allow-private", "127.0.0.1/32"};
  Outcome outcome = Clone(rules, "ssh://" + name_ + ":" + port + "/repo.git", "clone");
  EXPECT_EQ(outcome.exit_code, 0) << outcome.Describe();
  EXPECT_EQ(outcome.out, "served over the network\n") << outcome.Describe();
  EXPECT_EQ(server.connections(), 1);
  EXPECT_NE(server.last_command().find("git-upload-pack"), std::string::npos) << server.last_command();
  std::vector<nlohmann::json> records = AuditEvents("egress");
  ASSERT_EQ(records.size(), 1u) << outcome.Describe();
  EXPECT_EQ(records[0]["protocol"], "transparent");
  EXPECT_EQ(records[0]["host"], name_);
  EXPECT_GT(records[0]["received"].get<int64_t>(), 0);

  Outcome denied = Clone(rules, "ssh://denied.test:" + port + "/repo.git", "other");
  EXPECT_NE(denied.exit_code, 0) << denied.Describe();
  EXPECT_EQ(server.connections(), 1) << "the server saw the denied clone";
}

}  // namespace
}  // namespace corral_it
