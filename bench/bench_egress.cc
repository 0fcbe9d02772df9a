// Side-by-side egress proxy benchmark: a download, a connection's set-up and
// many tunnels at once, each directly from a loopback HTTP server and through
// net/egress_proxy.h's HTTP CONNECT tunnel, in one interleaved run.
//
// The server runs in this process: a pool of threads blocked in accept, the
// body sent with sendfile from a memfd, so it costs little next to the
// proxy. The proxy runs in a child process, as it runs in corral's
// supervisor apart from the sandbox and the destination: this binary again,
// in its --serve-proxy mode, behind the real gate (net/host_allowlist.h)
// allowing only bench.test at the server's port, with the static name
// bench.test mapped to 127.0.0.1 and 127.0.0.1/32 allowed as private, on a
// listener with the backlog the sandbox's init gives it (kernel/loopback.h).
// The client waits for the 200 before it speaks HTTP, as curl and npm do.
//
// The CPU time per GB downloaded, of the proxy's process and of this one
// (the client and the server), says what each side costs apart from how the
// machine's cores are shared.
// Other builds of this binary given as BASELINEs join the same interleaved
// run as more proxies, to compare builds of the proxy under one load.
//
// The downloads run in kSessions sessions, each with a server and proxies
// of its own: where the scheduler first puts the server's threads and the
// proxy lasts a whole session, and on two cores moved one session's ratio
// between 0.85x and 1.08x here. The ratio is each session's (its medians),
// and the run's is the median session's.
//
//   bench_egress [MEGABYTES] [ROUNDS] [CONNECTIONS] [TUNNELS] [BASELINE...]
//   (defaults: 200 MB, 11 rounds in each of 5 sessions, 2000 sequential
//   connections, 300 tunnels)
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <latch>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "base/unique_fd.h"
#include "kernel/loopback.h"
#include "net/destination.h"
#include "net/egress_proxy.h"
#include "net/host_allowlist.h"

extern char** environ;

namespace corral {
namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kBodyFile = 8 << 20;
constexpr uint64_t kSmallBody = 16 * 1024;

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "bench_egress: %s: %s\n", what.c_str(), std::strerror(errno));
  std::exit(2);
}

double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

double Percentile(std::vector<double> values, double fraction) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return values[std::min(values.size() - 1, static_cast<size_t>(fraction * static_cast<double>(values.size())))];
}

UniqueFd Listen(int backlog, uint16_t* port) {
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  struct sockaddr_in address = {};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  if (!fd || ::bind(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      ::listen(fd.get(), backlog) != 0 || ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    Die("cannot listen on 127.0.0.1");
  }
  *port = ntohs(address.sin_port);
  return fd;
}

// A connection to 127.0.0.1:port with TCP_NODELAY, as HTTP clients set it;
// none when refused.
UniqueFd Dial(uint16_t port) {
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  int one = 1;
  ::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  struct sockaddr_in address = {};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(port);
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) return UniqueFd();
  return fd;
}

bool SendAll(int fd, const std::string& bytes) {
  return ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(bytes.size());
}

// Reads up to the end of an HTTP head; the head, or empty at end of input.
// Bytes past it (the body's first ones) are left in `rest`.
std::string ReadHead(int fd, std::string* rest) {
  std::string got;
  char buffer[4096];
  for (;;) {
    size_t end = got.find("\r\n\r\n");
    if (end != std::string::npos) {
      *rest = got.substr(end + 4);
      return got.substr(0, end + 4);
    }
    ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n <= 0) return "";
    got.append(buffer, static_cast<size_t>(n));
  }
}

// The destination: `GET /N` answers N bytes of body and closes. `workers`
// threads wait in accept, made once: a thread started for each connection
// costs milliseconds on this kind of host, more than all else here.
class Server {
 public:
  explicit Server(int workers) : body_(::memfd_create("bench-body", MFD_CLOEXEC)) {
    std::string block(1 << 20, 'x');
    for (size_t written = 0; written < kBodyFile; written += block.size()) {
      if (::write(body_.get(), block.data(), block.size()) != static_cast<ssize_t>(block.size())) Die("memfd");
    }
    listener_ = Listen(SOMAXCONN, &port_);
    for (int i = 0; i < workers; ++i) workers_.emplace_back([this] { Serve(); });
  }
  ~Server() {
    ::shutdown(listener_.get(), SHUT_RDWR);  // every accept returns
    for (std::thread& worker : workers_) worker.join();
  }
  uint16_t port() const { return port_; }

 private:
  void Serve() {
    for (;;) {
      UniqueFd client(::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC));
      if (!client) {
        if (errno == EINTR || errno == ECONNABORTED) continue;
        return;
      }
      Answer(client.get());
    }
  }

  void Answer(int fd) {
    std::string rest;
    std::string head = ReadHead(fd, &rest);
    if (head.rfind("GET /", 0) != 0) return;
    uint64_t size = std::strtoull(head.c_str() + 5, nullptr, 10);
    if (!SendAll(fd, "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(size) + "\r\nConnection: close\r\n\r\n")) {
      return;
    }
    while (size > 0) {
      off_t offset = 0;
      ssize_t sent = ::sendfile(fd, body_.get(), &offset, static_cast<size_t>(std::min<uint64_t>(size, kBodyFile)));
      if (sent <= 0) return;
      size -= static_cast<uint64_t>(sent);
    }
    ::shutdown(fd, SHUT_WR);
    char byte;
    while (::recv(fd, &byte, 1, 0) > 0) {
    }
  }

  UniqueFd body_;
  UniqueFd listener_;
  uint16_t port_ = 0;
  std::vector<std::thread> workers_;
};

// --serve-proxy SERVER_PORT: the proxy, until stdin ends; its port is the
// first line on stdout.
int ServeProxy(uint16_t server_port) {
  HostRuleSet rules;
  Result<HostRule> rule = ParseHostRule("bench.test:" + std::to_string(server_port), HostRuleKind::kAllow);
  Result<Cidr> loopback = ParseAllowedPrivateRange("127.0.0.1/32");
  if (!rule.ok() || !loopback.ok()) return 2;
  rules.Add(*rule);
  auto gate = std::make_shared<HostAllowlist>(std::move(rules), std::vector<Cidr>{*loopback});
  EgressOptions options;
  options.names["bench.test"] = {*ParseAddress("127.0.0.1")};
  EgressListeners listeners;
  uint16_t port = 0;
  listeners.http = Listen(kSandboxListenBacklog, &port);
  Result<std::unique_ptr<EgressProxy>> proxy = EgressProxy::Start(std::move(listeners), gate, std::move(options));
  if (!proxy.ok()) {
    std::fprintf(stderr, "bench_egress: %s\n", proxy.error().ToString().c_str());
    return 2;
  }
  std::printf("%u\n", static_cast<unsigned>(port));
  std::fflush(stdout);
  char byte;
  while (::read(STDIN_FILENO, &byte, 1) > 0) {
  }
  (*proxy)->Stop();
  return 0;
}

// A proxy in a child process (`binary --serve-proxy`), stopped when this ends.
class ProxyProcess {
 public:
  ProxyProcess(const std::string& binary, uint16_t server_port) {
    int to_child[2], from_child[2];
    if (::pipe2(to_child, O_CLOEXEC) != 0 || ::pipe2(from_child, O_CLOEXEC) != 0) Die("pipe2");
    stdin_ = UniqueFd(to_child[1]);
    UniqueFd child_in(to_child[0]), out(from_child[0]), child_out(from_child[1]);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, child_in.get(), STDIN_FILENO);
    posix_spawn_file_actions_adddup2(&actions, child_out.get(), STDOUT_FILENO);
    std::string port_text = std::to_string(server_port);
    char* argv[] = {const_cast<char*>(binary.c_str()), const_cast<char*>("--serve-proxy"), port_text.data(), nullptr};
    if (::posix_spawn(&pid_, binary.c_str(), &actions, nullptr, argv, environ) != 0) Die("cannot run " + binary);
    posix_spawn_file_actions_destroy(&actions);
    child_out.Reset();
    char line[16] = {};
    ssize_t n = ::read(out.get(), line, sizeof line - 1);
    port_ = n > 0 ? static_cast<uint16_t>(std::atoi(line)) : 0;
    if (port_ == 0) Die(binary + " --serve-proxy did not start");
  }
  ~ProxyProcess() {
    stdin_.Reset();
    int status;
    ::waitpid(pid_, &status, 0);
  }
  uint16_t port() const { return port_; }
  // The CPU time the proxy has used, all its threads (/proc/PID/stat).
  double CpuSeconds() const {
    char path[64];
    std::snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(pid_));
    FILE* file = std::fopen(path, "r");
    char text[1024] = {};
    size_t n = file != nullptr ? std::fread(text, 1, sizeof text - 1, file) : 0;
    if (file != nullptr) std::fclose(file);
    const char* after_name = std::strrchr(text, ')');  // the name may hold spaces
    unsigned long user = 0, system = 0;
    if (n == 0 || after_name == nullptr ||
        std::sscanf(after_name + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &user, &system) != 2) {
      return 0;
    }
    return static_cast<double>(user + system) / static_cast<double>(::sysconf(_SC_CLK_TCK));
  }

 private:
  UniqueFd stdin_;
  pid_t pid_ = -1;
  uint16_t port_ = 0;
};

// A path to the server: directly, or through a proxy's CONNECT tunnel.
struct Route {
  std::string name;
  const ProxyProcess* proxy = nullptr;  // none: direct
};

// A connection that has reached the server: the tunnel is up when there is
// a proxy. Empty when it failed.
UniqueFd Open(const Route& route, uint16_t server_port) {
  if (route.proxy == nullptr) return Dial(server_port);
  UniqueFd fd = Dial(route.proxy->port());
  std::string authority = "bench.test:" + std::to_string(server_port);
  if (!fd || !SendAll(fd.get(), "CONNECT " + authority + " HTTP/1.1\r\nHost: " + authority + "\r\n\r\n")) {
    return UniqueFd();
  }
  std::string rest;
  std::string head = ReadHead(fd.get(), &rest);
  if (head.rfind("HTTP/1.1 200 ", 0) != 0 || !rest.empty()) return UniqueFd();
  return fd;
}

bool Request(int fd, uint64_t size) {
  return SendAll(fd, "GET /" + std::to_string(size) + " HTTP/1.1\r\nHost: bench.test\r\nConnection: close\r\n\r\n");
}

// Reads the answer's head and its body to the end; true when the body had
// exactly `size` bytes.
bool Drain(int fd, uint64_t size) {
  std::string rest;
  if (ReadHead(fd, &rest).rfind("HTTP/1.1 200 ", 0) != 0) return false;
  uint64_t got = rest.size();
  static thread_local std::vector<char> buffer(256 * 1024);
  for (;;) {
    ssize_t n = ::recv(fd, buffer.data(), buffer.size(), 0);
    if (n < 0) return false;
    if (n == 0) return got == size;
    got += static_cast<uint64_t>(n);
  }
}

double ProcessCpuSeconds() {
  struct timespec now = {};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) / 1e9;
}

// One download of `size` bytes, in MB/s; 0 when it failed.
double Download(const Route& route, uint16_t server_port, uint64_t size) {
  Clock::time_point start = Clock::now();
  UniqueFd fd = Open(route, server_port);
  if (!fd || !Request(fd.get(), size) || !Drain(fd.get(), size)) return 0;
  return static_cast<double>(size) / 1e6 / (Ms(Clock::now() - start) / 1000);
}

// From the first SYN to the answer's first byte, in ms; negative when it
// failed. The rest of the answer is read untimed.
double FirstByte(const Route& route, uint16_t server_port) {
  Clock::time_point start = Clock::now();
  UniqueFd fd = Open(route, server_port);
  char byte;
  if (!fd || !Request(fd.get(), 1) || ::recv(fd.get(), &byte, 1, MSG_PEEK) != 1) return -1;
  double ms = Ms(Clock::now() - start);
  return Drain(fd.get(), 1) ? ms : -1;
}

struct Burst {
  int succeeded = 0;
  double all_ms = 0;      // from the start to the last one's end
  double slowest_ms = 0;  // the slowest one alone
};

// `count` connections at once, each asking for a small answer.
Burst Concurrent(const Route& route, uint16_t server_port, int count) {
  std::latch ready(count + 1);
  std::atomic<int> succeeded = 0;
  std::vector<double> each(static_cast<size_t>(count), 0);
  std::vector<std::thread> threads;
  Clock::time_point start;
  for (int i = 0; i < count; ++i) {
    threads.emplace_back([&, i] {
      ready.arrive_and_wait();
      Clock::time_point begin = Clock::now();
      UniqueFd fd = Open(route, server_port);
      if (fd && Request(fd.get(), kSmallBody) && Drain(fd.get(), kSmallBody)) ++succeeded;
      each[static_cast<size_t>(i)] = Ms(Clock::now() - begin);
    });
  }
  start = Clock::now();
  ready.arrive_and_wait();
  for (std::thread& thread : threads) thread.join();
  return {succeeded, Ms(Clock::now() - start), *std::max_element(each.begin(), each.end())};
}

struct Samples {
  std::vector<double> mb_per_s;
  std::vector<double> session_ratios;  // to direct: each session's median download over direct's
  double proxy_cpu_s = 0;  // during the downloads
  double local_cpu_s = 0;  // this process's (the client and the server), during the downloads
  std::vector<double> first_byte_ms;
  std::vector<Burst> bursts;
  int failures = 0;
};

constexpr int kSessions = 5;

// A server and, for each route but direct, a proxy of its own.
struct Session {
  Session(int workers, const std::vector<std::string>& names, const std::vector<std::string>& binaries)
      : server(workers) {
    routes.push_back({names[0], nullptr});
    for (size_t i = 0; i < binaries.size(); ++i) {
      proxies.push_back(std::make_unique<ProxyProcess>(binaries[i], server.port()));
      routes.push_back({names[i + 1], proxies.back().get()});
    }
  }
  Server server;
  std::vector<std::unique_ptr<ProxyProcess>> proxies;
  std::vector<Route> routes;
};

int Bench(int argc, char** argv) {
  uint64_t megabytes = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 200;
  int rounds = argc > 2 ? std::atoi(argv[2]) : 11;
  int connections = argc > 3 ? std::atoi(argv[3]) : 2000;
  int tunnels = argc > 4 ? std::atoi(argv[4]) : 300;
  std::vector<std::string> names = {"direct", "through the proxy"};
  std::vector<std::string> binaries = {"/proc/self/exe"};
  for (int i = 5; i < argc; ++i) {
    names.push_back(std::string("through the baseline proxy ") + argv[i]);
    binaries.push_back(argv[i]);
  }
  std::vector<Samples> samples(names.size());

  for (int session_number = 0; session_number < kSessions; ++session_number) {
    Session session(8, names, binaries);
    const std::vector<Route>& routes = session.routes;
    for (size_t r = 0; r < routes.size(); ++r) Download(routes[r], session.server.port(), megabytes * 1000000 / 10);  // warm
    for (size_t r = 1; r < routes.size(); ++r) samples[r].proxy_cpu_s -= routes[r].proxy->CpuSeconds();
    std::vector<std::vector<double>> rates(routes.size());
    for (int round = 0; round < rounds; ++round) {
      for (size_t r = 0; r < routes.size(); ++r) {
        double cpu = ProcessCpuSeconds();
        double rate = Download(routes[r], session.server.port(), megabytes * 1000000);
        samples[r].local_cpu_s += ProcessCpuSeconds() - cpu;
        if (rate <= 0) ++samples[r].failures;
        samples[r].mb_per_s.push_back(rate);
        rates[r].push_back(rate);
      }
    }
    for (size_t r = 1; r < routes.size(); ++r) {
      samples[r].proxy_cpu_s += routes[r].proxy->CpuSeconds();
      samples[r].session_ratios.push_back(Median(rates[r]) / Median(rates[0]));
    }
  }

  Session session(tunnels + 8, names, binaries);
  const std::vector<Route>& routes = session.routes;
  Server& server = session.server;
  for (int i = 0; i < connections; ++i) {
    for (size_t r = 0; r < routes.size(); ++r) {
      double ms = FirstByte(routes[r], server.port());
      if (ms < 0) ++samples[r].failures;
      else samples[r].first_byte_ms.push_back(ms);
    }
  }
  for (int round = 0; round < 3; ++round) {
    for (size_t r = 0; r < routes.size(); ++r) samples[r].bursts.push_back(Concurrent(routes[r], server.port(), tunnels));
  }

  std::printf("%llu MB downloads x %d in each of %d sessions, %d sequential connections, %d at once x 3; interleaved; "
              "medians\n\n",
              static_cast<unsigned long long>(megabytes), rounds, kSessions, connections, tunnels);
  std::printf("| route | download | CPU per GB: client and server | proxy | first byte, median | p90 | %d at once: all done | slowest one "
              "| succeeded |\n",
              tunnels);
  std::printf("|---|---|---|---|---|---|---|---|---|\n");
  for (size_t r = 0; r < routes.size(); ++r) {
    const Samples& s = samples[r];
    std::vector<double> all, slowest;
    int least = tunnels;
    for (const Burst& burst : s.bursts) {
      all.push_back(burst.all_ms);
      slowest.push_back(burst.slowest_ms);
      least = std::min(least, burst.succeeded);
    }
    double gigabytes = static_cast<double>(megabytes * static_cast<uint64_t>(rounds * kSessions)) / 1000;
    std::string proxy_cpu = r > 0 ? std::to_string(static_cast<int>(1000 * s.proxy_cpu_s / gigabytes)) + " ms" : "-";
    std::printf("| %s | %.0f MB/s | %.0f ms | %s | %.3f ms | %.3f ms | %.1f ms | %.1f ms | %d of %d (the worst of 3) |\n",
                routes[r].name.c_str(), Median(s.mb_per_s), 1000 * s.local_cpu_s / gigabytes, proxy_cpu.c_str(),
                Median(s.first_byte_ms),
                Percentile(s.first_byte_ms, 0.9), Median(all), Median(slowest), least, tunnels);
  }
  std::printf("\n");
  auto all_done = [](const Samples& s) {
    std::vector<double> all;
    for (const Burst& burst : s.bursts) all.push_back(burst.all_ms);
    return Median(all);
  };
  auto met = [](bool yes) { return yes ? "met" : "not met"; };
  for (size_t r = 1; r < routes.size(); ++r) {
    const std::vector<double>& ratios = samples[r].session_ratios;
    double throughput = Median(ratios);
    double added = Median(samples[r].first_byte_ms) - Median(samples[0].first_byte_ms);
    int least = tunnels;
    for (const Burst& burst : samples[r].bursts) least = std::min(least, burst.succeeded);
    std::printf("%s / direct: throughput %.2fx (the median session; the sessions %.2fx to %.2fx; goal >= 0.9: %s); "
                "first byte %+.3f ms at the median (goal < 0.3 ms: %s); %d at once: %d succeeded, in %.2fx the time\n",
                routes[r].name.c_str(), throughput, *std::min_element(ratios.begin(), ratios.end()),
                *std::max_element(ratios.begin(), ratios.end()), met(throughput >= 0.9), added, met(added < 0.3),
                tunnels, least, all_done(samples[r]) / all_done(samples[0]));
    if (least < tunnels) ++samples[r].failures;
  }
  for (size_t r = 2; r < routes.size(); ++r) {
    std::printf("proxy / %s: throughput %.2fx, CPU per GB %.2fx\n", routes[r].name.c_str(),
                Median(samples[1].mb_per_s) / Median(samples[r].mb_per_s),
                samples[1].proxy_cpu_s / samples[r].proxy_cpu_s);
  }
  int failures = 0;
  for (size_t r = 0; r < routes.size(); ++r) {
    if (samples[r].failures > 0) std::printf("%s: %d failed\n", routes[r].name.c_str(), samples[r].failures);
    failures += samples[r].failures;
  }
  return failures > 0 ? 1 : 0;
}

}  // namespace
}  // namespace corral

int main(int argc, char** argv) {
  if (argc == 3 && std::string(argv[1]) == "--serve-proxy") {
    return corral::ServeProxy(static_cast<uint16_t>(std::atoi(argv[2])));
  }
  return corral::Bench(argc, argv);
}
