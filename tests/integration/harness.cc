#include "harness.h"

#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <linux/audit.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/ioctl.h>
#include <poll.h>
#include <termios.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "kernel/bpf_evaluator.h"
#include "kernel/seccomp.h"

extern char** environ;

namespace corral_it {
namespace {

[[noreturn]] void Fail(const std::string& what) {
  throw std::runtime_error(what + ": " + std::strerror(errno));
}

std::string Canonical(const char* env, const char* fallback) {
  const char* given = std::getenv(env);
  std::string path = given != nullptr && given[0] != '\0' ? given : fallback;
  char resolved[PATH_MAX];
  if (::realpath(path.c_str(), resolved) == nullptr) Fail(std::string(env) + " " + path);
  return resolved;
}

int RemoveEntry(const char* path, const struct stat*, int type, struct FTW*) {
  if (type == FTW_DP) {
    ::rmdir(path);
  } else {
    ::unlink(path);
  }
  return 0;
}

// Makes every directory below `path` writable and searchable, so a tree the
// sandbox left read-only can still be removed.
int OpenUp(const char* path, const struct stat* st, int type, struct FTW*) {
  if (type == FTW_D || type == FTW_DNR) ::chmod(path, (st->st_mode & 07777) | S_IRWXU);
  return 0;
}

void ListInto(const std::string& root, const std::string& relative, std::set<std::string>* out) {
  DIR* dir = ::opendir((root + "/" + relative).c_str());
  if (dir == nullptr) return;
  while (const struct dirent* entry = ::readdir(dir)) {
    std::string name = entry->d_name;
    if (name == "." || name == "..") continue;
    std::string child = relative.empty() ? name : relative + "/" + name;
    struct stat st;
    if (::lstat((root + "/" + child).c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
      out->insert(child + "/");
      ListInto(root, child, out);
    } else {
      out->insert(child);
    }
  }
  ::closedir(dir);
}

std::string ReadAll(int fd) {
  std::string text;
  char buffer[4096];
  off_t offset = 0;
  ssize_t n;
  while ((n = ::pread(fd, buffer, sizeof buffer, offset)) > 0) {
    text.append(buffer, static_cast<size_t>(n));
    offset += n;
  }
  return text;
}

void MakeParents(const std::string& path) {
  for (size_t slash = path.find('/', 1); slash != std::string::npos; slash = path.find('/', slash + 1)) {
    ::mkdir(path.substr(0, slash).c_str(), 0755);
  }
}

void CloseFd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

}  // namespace

const std::string& CorralBin() {
  static const std::string path = Canonical("CORRAL_BIN", CORRAL_DEFAULT_BIN);
  return path;
}

const std::string& ProbesDir() {
  static const std::string path = Canonical("CORRAL_PROBES", CORRAL_DEFAULT_PROBES);
  return path;
}

std::string ProbePath(const std::string& name) { return ProbesDir() + "/probe_" + name; }

TempDir::TempDir(const std::string& prefix) {
  std::string pattern = "/tmp/" + prefix + ".XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) Fail("mkdtemp " + pattern);
  char resolved[PATH_MAX];
  if (::realpath(pattern.c_str(), resolved) == nullptr || pattern != resolved) {
    throw std::runtime_error(pattern + " is not canonical (is /tmp a symlink?)");
  }
  path_ = resolved;
}

TempDir::~TempDir() {
  ::nftw(path_.c_str(), OpenUp, 16, FTW_PHYS);
  ::nftw(path_.c_str(), RemoveEntry, 16, FTW_DEPTH | FTW_PHYS);
}

void TempDir::Write(const std::string& relative, const std::string& content, mode_t mode) const {
  std::string path = *this / relative;
  MakeParents(path);
  WriteFile(path, content, mode);
}

void TempDir::Mkdir(const std::string& relative) const {
  std::string path = *this / relative;
  MakeParents(path);
  if (::mkdir(path.c_str(), 0755) != 0 && errno != EEXIST) Fail("mkdir " + path);
}

std::set<std::string> TempDir::Listing() const {
  std::set<std::string> out;
  ListInto(path_, "", &out);
  return out;
}

std::optional<std::string> ReadFile(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::string text = ReadAll(fd);
  ::close(fd);
  return text;
}

void WriteFile(const std::string& path, const std::string& content, mode_t mode) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0) Fail("open " + path);
  if (::write(fd, content.data(), content.size()) != static_cast<ssize_t>(content.size())) Fail("write " + path);
  ::fchmod(fd, mode);
  ::close(fd);
}

bool Exists(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0;
}

std::string RandomToken(const std::string& prefix) {
  static std::mt19937_64 engine{std::random_device{}()};
  std::ostringstream out;
  out << prefix << '-' << std::hex << engine();
  return out.str();
}

std::string Outcome::Describe() const {
  std::ostringstream out;
  out << "exit code " << exit_code;
  if (signal != 0) out << ", killed by signal " << signal;
  if (timed_out) out << ", TIMED OUT";
  out << " after " << elapsed.count() << " ms\n--- stdout ---\n" << this->out << "--- stderr ---\n" << err;
  return out.str();
}

Process::Process(const std::vector<std::string>& argv, const SpawnOptions& options) : timeout_(options.timeout) {
  // Everything the child needs is prepared before fork.
  std::map<std::string, std::string> env;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    std::string text = *entry;
    size_t eq = text.find('=');
    if (eq != std::string::npos) env[text.substr(0, eq)] = text.substr(eq + 1);
  }
  for (const auto& [name, value] : options.env) env[name] = value;
  for (const std::string& name : options.unset_env) env.erase(name);
  std::vector<std::string> env_strings;
  for (const auto& [name, value] : env) env_strings.push_back(name + "=" + value);
  std::vector<char*> envp, args;
  for (std::string& entry : env_strings) envp.push_back(entry.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_copy = argv;
  for (std::string& arg : argv_copy) args.push_back(arg.data());
  args.push_back(nullptr);

  out_fd_ = ::memfd_create("corral-it-stdout", MFD_CLOEXEC);
  err_fd_ = ::memfd_create("corral-it-stderr", MFD_CLOEXEC);
  int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (out_fd_ < 0 || err_fd_ < 0 || null_fd < 0) Fail("capture files");
  int stdin_fd = options.stdin_fd >= 0 ? options.stdin_fd : null_fd;
  const char* cwd = options.cwd.empty() ? nullptr : options.cwd.c_str();
  const int stderr_fd = options.stderr_fd >= 0 ? options.stderr_fd : err_fd_;
  const int stdout_fd = options.stdout_fd >= 0 ? options.stdout_fd : out_fd_;
  const int tty = options.controlling_tty;
  const bool new_session = options.new_session || tty >= 0;

  start_ = std::chrono::steady_clock::now();
  pid_ = ::fork();
  if (pid_ < 0) Fail("fork");
  if (pid_ == 0) {
    sigset_t none;
    ::sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    for (int sig = 1; sig < NSIG; ++sig) ::signal(sig, SIG_DFL);
    if (::dup2(stdin_fd, 0) < 0 || ::dup2(stdout_fd, 1) < 0 || ::dup2(stderr_fd, 2) < 0) ::_exit(126);
    if (new_session && ::setsid() < 0) ::_exit(126);
    if (tty >= 0 && ::ioctl(tty, TIOCSCTTY, 0) != 0) ::_exit(126);
    if (cwd != nullptr && ::chdir(cwd) != 0) ::_exit(126);
    ::execve(args[0], args.data(), envp.data());
    ::_exit(127);
  }
  ::close(null_fd);
}

Process::~Process() {
  if (!waited_) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  CloseFd(out_fd_);
  CloseFd(err_fd_);
}

const Outcome& Process::Wait() {
  if (waited_) return outcome_;
  int status = 0;
  for (;;) {
    pid_t done = ::waitpid(pid_, &status, WNOHANG);
    if (done == pid_) break;
    if (done < 0 && errno != EINTR) Fail("waitpid");
    if (std::chrono::steady_clock::now() - start_ > timeout_ && !outcome_.timed_out) {
      outcome_.timed_out = true;
      ::kill(pid_, SIGKILL);
    }
    std::this_thread::sleep_for(2ms);
  }
  waited_ = true;
  outcome_.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start_);
  if (WIFEXITED(status)) outcome_.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) outcome_.signal = WTERMSIG(status);
  outcome_.out = ReadAll(out_fd_);
  outcome_.err = ReadAll(err_fd_);
  return outcome_;
}

std::string Process::OutputSoFar() const { return ReadAll(out_fd_); }

bool Process::Running() const {
  if (waited_) return false;
  siginfo_t info = {};
  return ::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == 0;
}

Outcome Execute(const std::vector<std::string>& argv, const SpawnOptions& options) {
  Process process(argv, options);
  return process.Wait();
}

SpawnOptions WithEnv(std::map<std::string, std::string> env) {
  SpawnOptions options;
  options.env = std::move(env);
  return options;
}

bool WaitFor(const std::function<bool()>& done, std::chrono::milliseconds limit) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  for (;;) {
    if (done()) return true;
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(10ms);
  }
}

namespace {
std::vector<std::string> InFreshProc(const std::vector<std::string>& command, const std::vector<std::string>& entries) {
  std::vector<std::string> argv = {"/usr/bin/unshare", "--user", "--map-root-user", "--mount",
                                   "--pid",            "--fork", "--mount-proc"};
  argv.insert(argv.end(), command.begin(), command.end());
  for (const std::string& entry : entries) argv.push_back("/proc/" + entry);
  return argv;
}
}  // namespace

std::string FreshProcModes(const std::vector<std::string>& entries) {
  Outcome outcome = Execute(InFreshProc({"stat", "-c", "%a"}, entries));
  if (outcome.exit_code != 0) throw std::runtime_error("a fresh procfs: " + outcome.Describe());
  return outcome.out;
}

void RestoreProcModes(const std::vector<std::string>& entries, const std::string& mode) {
  Execute(InFreshProc({"chmod", mode}, entries));
}

namespace {
std::vector<pid_t> ProcessesWhere(const std::function<bool(const std::string&)>& match) {
  std::vector<pid_t> found;
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) Fail("opendir /proc");
  while (const struct dirent* entry = ::readdir(proc)) {
    char* end = nullptr;
    long pid = std::strtol(entry->d_name, &end, 10);
    if (pid <= 0 || *end != '\0' || pid == ::getpid()) continue;
    std::optional<std::string> cmdline = ReadFile("/proc/" + std::string(entry->d_name) + "/cmdline");
    if (!cmdline || !match(*cmdline)) continue;
    std::optional<std::string> state = StatusField(static_cast<pid_t>(pid), "State");
    if (state && state->starts_with("Z")) continue;
    found.push_back(static_cast<pid_t>(pid));
  }
  ::closedir(proc);
  return found;
}
}  // namespace

std::vector<pid_t> ProcessesMatching(const std::string& needle) {
  return ProcessesWhere([&](const std::string& cmdline) { return cmdline.find(needle) != std::string::npos; });
}

std::vector<pid_t> ProcessesStartingWith(const std::string& prefix) {
  return ProcessesWhere([&](const std::string& cmdline) { return cmdline.starts_with(prefix); });
}

std::string CommandLine(const std::vector<std::string>& argv) {
  std::string line;
  for (const std::string& arg : argv) line += arg + std::string(1, '\0');
  return line;
}

std::optional<std::string> StatusField(pid_t pid, const std::string& field) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (!line.starts_with(field + ":")) continue;
    size_t start = line.find_first_not_of(" \t", field.size() + 1);
    return start == std::string::npos ? std::string() : line.substr(start);
  }
  return std::nullopt;
}

pid_t ParentOf(pid_t pid) {
  std::optional<std::string> parent = StatusField(pid, "PPid");
  if (!parent || parent->empty() || parent->find_first_not_of("0123456789") != std::string::npos) return -1;
  return static_cast<pid_t>(std::stol(*parent));
}

std::string NamespaceOf(pid_t pid, const std::string& kind) {
  char target[256] = {};
  ssize_t n = ::readlink(("/proc/" + std::to_string(pid) + "/ns/" + kind).c_str(), target, sizeof target - 1);
  return n > 0 ? std::string(target, static_cast<size_t>(n)) : "unreadable";
}

Inherited UnderSubreaper(const std::function<int()>& body) {
  int report[2];
  if (::pipe(report) != 0) return {};
  pid_t reaper = ::fork();
  if (reaper < 0) return {};
  if (reaper == 0) {
    ::close(report[0]);
    ::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    const int result = body();
    ::usleep(300 * 1000);
    int count = 0;
    for (int status = 0; ::waitpid(-1, &status, WNOHANG | __WALL) > 0;) ++count;
    char bytes[2] = {static_cast<char>(std::min(std::max(result, 0), 127)), static_cast<char>(std::min(count, 127))};
    (void)!::write(report[1], bytes, 2);
    ::_exit(0);
  }
  ::close(report[1]);
  char bytes[2];
  ssize_t n = ::read(report[0], bytes, 2);
  ::close(report[0]);
  int status = 0;
  ::waitpid(reaper, &status, 0);
  if (n != 2) return {};
  return Inherited{bytes[0], bytes[1]};
}

namespace {
// What waits on `fd`, read until nothing more arrives within `wait_ms`.
std::string DrainFd(int fd, int wait_ms) {
  std::string bytes;
  struct pollfd pfd = {fd, POLLIN, 0};
  while (::poll(&pfd, 1, wait_ms) > 0 && (pfd.revents & POLLIN) != 0) {
    char buffer[256];
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n <= 0) break;
    bytes.append(buffer, static_cast<size_t>(n));
  }
  return bytes;
}
}  // namespace

Pty::Pty() {
  master_ = ::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (master_ < 0 || ::grantpt(master_) != 0 || ::unlockpt(master_) != 0) Fail("posix_openpt");
  slave_ = ::open(::ptsname(master_), O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (slave_ < 0) Fail("open pty slave");
}

Pty::~Pty() {
  CloseFd(slave_);
  CloseFd(master_);
}

void Pty::NonCanonical() const {
  struct termios tio;
  ::tcgetattr(slave_, &tio);
  tio.c_lflag = (tio.c_lflag & ~static_cast<tcflag_t>(ICANON)) | ECHO;
  tio.c_cc[VMIN] = 0;
  tio.c_cc[VTIME] = 0;
  ::tcsetattr(slave_, TCSANOW, &tio);
}

std::string Pty::Injected() const { return DrainFd(master_, 300) + DrainFd(slave_, 0); }

const std::string& Pty::Transcript(std::chrono::milliseconds wait) {
  transcript_ += DrainFd(master_, static_cast<int>(wait.count()));
  return transcript_;
}

size_t Pty::Discard(std::chrono::milliseconds wait) const {
  size_t total = 0;
  auto end = std::chrono::steady_clock::now() + wait;
  struct pollfd pfd = {master_, POLLIN, 0};
  while (std::chrono::steady_clock::now() < end && ::poll(&pfd, 1, 10) >= 0) {
    if ((pfd.revents & POLLIN) == 0) continue;
    char buffer[1 << 14];
    ssize_t n = ::read(master_, buffer, sizeof buffer);
    if (n <= 0) break;
    total += static_cast<size_t>(n);
  }
  return total;
}

void Pty::Type(const std::string& text) const {
  if (::write(master_, text.data(), text.size()) != static_cast<ssize_t>(text.size())) Fail("write to the pty");
}

Listener Listener::Tcp() { return Inet(SOCK_STREAM); }
Listener Listener::Udp() { return Inet(SOCK_DGRAM); }

Listener Listener::Inet(int type) {
  int fd = ::socket(AF_INET, type | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  struct sockaddr_in addr = {};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t size = sizeof addr;
  bool stream = type == SOCK_STREAM;
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      (stream && ::listen(fd, 16) != 0) || ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &size) != 0) {
    Fail("loopback listener");
  }
  return Listener(fd, ntohs(addr.sin_port), stream);
}

namespace {
int UnixListen(const std::string& name, bool abstract) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  struct sockaddr_un addr = {};
  addr.sun_family = AF_UNIX;
  if (name.size() + 1 >= sizeof addr.sun_path) throw std::runtime_error("unix socket name too long: " + name);
  std::memcpy(addr.sun_path + (abstract ? 1 : 0), name.data(), name.size());
  socklen_t size = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + name.size() + 1);
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&addr), size) != 0 || ::listen(fd, 16) != 0) {
    Fail("unix listener " + name);
  }
  return fd;
}
}  // namespace

Listener Listener::UnixPath(const std::string& path) { return Listener(UnixListen(path, false), 0, true); }
Listener Listener::UnixAbstract(const std::string& name) { return Listener(UnixListen(name, true), 0, true); }

Listener::Listener(Listener&& other) noexcept : fd_(other.fd_), port_(other.port_), stream_(other.stream_) {
  other.fd_ = -1;
}

Listener::~Listener() { CloseFd(fd_); }

bool Listener::GotSomething() const {
  if (stream_) {
    int fd = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) return false;
    ::close(fd);
    return true;
  }
  char byte;
  return ::recv(fd_, &byte, 1, MSG_DONTWAIT) >= 0;
}

namespace {
int signals_write_fd = -1;
void RecordSignal(int sig) {
  unsigned char byte = static_cast<unsigned char>(sig);
  ssize_t ignored = ::write(signals_write_fd, &byte, 1);
  (void)ignored;
}
}  // namespace

Decoy Decoy::Catcher() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) Fail("pipe2");
  pid_t pid = ::fork();
  if (pid < 0) Fail("fork");
  if (pid == 0) {
    signals_write_fd = fds[1];
    struct sigaction action = {};
    action.sa_handler = RecordSignal;
    for (int sig : {SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGCONT}) ::sigaction(sig, &action, nullptr);
    sigset_t none;
    ::sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    RecordSignal(0);  // ready: the handlers are in place
    for (;;) ::pause();
  }
  ::close(fds[1]);
  unsigned char ready = 1;
  if (::read(fds[0], &ready, 1) != 1 || ready != 0) Fail("decoy start");
  ::fcntl(fds[0], F_SETFL, O_NONBLOCK);
  return Decoy(pid, fds[0]);
}

Decoy Decoy::Sleeper(const std::vector<std::string>& env) {
  std::vector<std::string> strings = env;
  std::vector<char*> envp;
  for (std::string& entry : strings) envp.push_back(entry.data());
  envp.push_back(nullptr);
  char sleep_path[] = "/bin/sleep";
  char arg0[] = "sleep", arg1[] = "600";
  char* argv[] = {arg0, arg1, nullptr};
  pid_t pid = ::fork();
  if (pid < 0) Fail("fork");
  if (pid == 0) {
    ::execve(sleep_path, argv, envp.data());
    ::_exit(127);
  }
  return Decoy(pid, -1);
}

Decoy::Decoy(Decoy&& other) noexcept : pid_(other.pid_), signals_fd_(other.signals_fd_), reaped_(other.reaped_) {
  other.pid_ = -1;
  other.signals_fd_ = -1;
}

Decoy::~Decoy() {
  if (pid_ > 0 && !reaped_) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  CloseFd(signals_fd_);
}

bool Decoy::Alive() {
  if (reaped_) return false;
  int status;
  if (::waitpid(pid_, &status, WNOHANG) == pid_) {
    reaped_ = true;
    return false;
  }
  std::optional<std::string> state = StatusField(pid_, "State");
  // S: sleeping. Anything else (stopped, traced, dead) means it was reached.
  return state && state->starts_with("S");
}

std::vector<int> Decoy::SignalsReceived() const {
  std::vector<int> signals;
  unsigned char byte;
  while (signals_fd_ >= 0 && ::read(signals_fd_, &byte, 1) == 1) signals.push_back(byte);
  return signals;
}

std::vector<nlohmann::json> ReadAudit(const std::string& path) {
  std::vector<nlohmann::json> records;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty()) records.push_back(nlohmann::json::parse(line));
  }
  return records;
}

SandboxTest::SandboxTest() { audit_path_ = NextAuditPath(); }

std::vector<nlohmann::json> SandboxTest::AuditEvents(const std::string& event) const {
  std::vector<nlohmann::json> records;
  for (nlohmann::json& record : Audit()) {
    if (record.value("event", "") == event) records.push_back(std::move(record));
  }
  return records;
}

std::string SandboxTest::NextAuditPath() { return outside_ / ("audit-" + std::to_string(runs_++) + ".jsonl"); }

uint32_t EmbeddedFilterVerdict(int nr, uint64_t arg0) {
  seccomp_data call = {};
  call.nr = nr;
  call.arch = AUDIT_ARCH_X86_64;
  call.args[0] = arg0;
  uint32_t verdicts[3] = {0, 0, 0};
  for (corral::InetSockets inet :
       {corral::InetSockets::kNone, corral::InetSockets::kStreamAndDatagram, corral::InetSockets::kTcpOnly}) {
    corral::Result<uint32_t> action =
        corral::EvaluateBpf(corral::EmbeddedSeccompFilter(corral::SeccompOptions{inet}), call);
    EXPECT_TRUE(action.ok()) << "syscall " << nr;
    verdicts[static_cast<int>(inet)] = action.ok() ? *action : 0;
  }
  EXPECT_EQ(verdicts[0], verdicts[1]) << "syscall " << nr << " with the network off and on";
  EXPECT_EQ(verdicts[0], verdicts[2]) << "syscall " << nr << " with the network off and with TCP ports open";
  return verdicts[0];
}

SpawnOptions SandboxTest::Defaults(SpawnOptions options) const {
  if (options.cwd.empty()) options.cwd = workspace_.path();
  options.env.emplace("XDG_STATE_HOME", state_.path());
  options.env.emplace("XDG_CONFIG_HOME", config_.path());
  // The system's PATH, not the developer's: a toolchain in their home
  // (pyenv's shims) would add corral's PATH warning to every run.
  options.env.emplace("PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
  return options;
}

Outcome SandboxTest::Corral(const std::vector<std::string>& args, SpawnOptions options) {
  std::vector<std::string> argv = {CorralBin()};
  argv.insert(argv.end(), args.begin(), args.end());
  return Execute(argv, Defaults(std::move(options)));
}

std::vector<std::string> SandboxTest::RunArgv(const std::vector<std::string>& grants,
                                              const std::vector<std::string>& command) {
  audit_path_ = NextAuditPath();
  std::vector<std::string> argv = {CorralBin(), "run", "--audit", audit_path_};
  argv.insert(argv.end(), grants.begin(), grants.end());
  argv.push_back("--");
  argv.insert(argv.end(), command.begin(), command.end());
  return argv;
}

std::vector<std::string> SandboxTest::ProbeArgv(const std::string& name, const std::vector<std::string>& args,
                                                const std::vector<std::string>& grants) {
  std::vector<std::string> all_grants = {"--allow-exec", ProbesDir()};
  all_grants.insert(all_grants.end(), grants.begin(), grants.end());
  std::vector<std::string> command = {ProbePath(name)};
  command.insert(command.end(), args.begin(), args.end());
  return RunArgv(all_grants, command);
}

Outcome SandboxTest::RunIn(const std::vector<std::string>& grants, const std::vector<std::string>& command,
                           SpawnOptions options) {
  return Execute(RunArgv(grants, command), Defaults(std::move(options)));
}

Outcome SandboxTest::Probe(const std::string& name, const std::vector<std::string>& args,
                           const std::vector<std::string>& grants, SpawnOptions options) {
  return Execute(ProbeArgv(name, args, grants), Defaults(std::move(options)));
}

}  // namespace corral_it
