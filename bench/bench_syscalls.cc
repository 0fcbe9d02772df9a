// The cost inside the sandbox: system calls and syscall-heavy jobs, run bare,
// inside `corral run` (the default policy) and inside bubblewrap with a
// comparable view, interleaved in one run, as ratios.
//
// What runs in each environment is this same program, copied into the
// workspace: `loop OP N` times N iterations of one operation and prints the
// nanoseconds per operation; `time ARGV...` times one job (a shell pipeline,
// a compile) spawned from inside and prints its milliseconds. The sandbox's
// own set-up is outside both timings: only what the confined process pays
// per call is compared. Each row reports the fastest round of each
// environment: on a shared host the slower rounds measure the other jobs.
//
//   bench_syscalls drive CORRAL WORKSPACE [ROUNDS] [BASELINE_CORRAL]
//   bench_syscalls loop getppid|open_close|open_usr|stat N
//   bench_syscalls time ARGV...
//
// The operations: getppid (a syscall that reads nothing: the seccomp
// filter's cost alone), open+close of a file at the workspace's top and of
// /usr/include/stdio.h (Landlock's walk up the path, seccomp's argument
// checks on openat), stat of the workspace file (newfstatat). The jobs:
// `find /usr -type f | wc -l` and `cc -c` of a small C file.
#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

extern char** environ;

namespace {

using Clock = std::chrono::steady_clock;

constexpr const char* kWorkspaceFile = "bench-file";
constexpr const char* kUsrFile = "/usr/include/stdio.h";
constexpr const char* kSource = "bench-compile.c";

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "bench_syscalls: %s: %s\n", what.c_str(), std::strerror(errno));
  std::exit(2);
}

// One batch of `n` operations; nanoseconds per operation.
double Batch(const std::string& op, long n) {
  auto start = Clock::now();
  if (op == "getppid") {
    for (long i = 0; i < n; ++i) ::syscall(SYS_getppid);
  } else if (op == "open_close" || op == "open_usr") {
    const char* path = op == "open_close" ? kWorkspaceFile : kUsrFile;
    for (long i = 0; i < n; ++i) {
      int fd = ::open(path, O_RDONLY | O_CLOEXEC);
      if (fd < 0) Die(std::string("open ") + path);
      ::close(fd);
    }
  } else if (op == "stat") {
    struct stat st;
    for (long i = 0; i < n; ++i) {
      if (::stat(kWorkspaceFile, &st) != 0) Die("stat");
    }
  } else {
    std::fprintf(stderr, "bench_syscalls: unknown operation %s\n", op.c_str());
    std::exit(2);
  }
  return std::chrono::duration<double, std::nano>(Clock::now() - start).count() / static_cast<double>(n);
}

// The fastest of 200 short batches (n operations in all), after one to warm
// the caches: what the call costs while the process runs, not how often the
// scheduler took the CPU away (on a shared 2-core host a long batch measures
// the other jobs as much as the call).
int Loop(const std::string& op, long n) {
  const long batch = n / 200 + 1;
  Batch(op, batch);
  double fastest = Batch(op, batch);
  for (int i = 1; i < 200; ++i) fastest = std::min(fastest, Batch(op, batch));
  std::printf("%.1f\n", fastest);
  return 0;
}

// Spawns `args` with stdin on /dev/null, stdout on `stdout_fd` (or
// /dev/null) and stderr on `stderr_fd` (or as it is); the exit status, and
// the wall time in `ms`.
enum class Session { kSame, kNew };

int Spawn(const std::vector<std::string>& args, int stdout_fd, int stderr_fd, double* ms,
          Session session = Session::kSame) {
  std::vector<char*> argv;
  for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  if (stdout_fd >= 0) {
    posix_spawn_file_actions_adddup2(&actions, stdout_fd, 1);
  } else {
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  }
  if (stderr_fd >= 0) posix_spawn_file_actions_adddup2(&actions, stderr_fd, 2);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  if (session == Session::kNew) posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSID);
  auto start = Clock::now();
  pid_t pid;
  if (posix_spawn(&pid, argv[0], &actions, &attributes, argv.data(), environ) != 0) {
    Die(std::string("spawn ") + argv[0]);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (ms != nullptr) *ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  return status;
}

// Times a job in a session of its own in every environment: the kernel's
// autogroup scheduling shares the CPU between sessions, and corral starts
// the command in a new session where bare and bubblewrap do not, which on
// a loaded host alone made `find` look faster inside corral than bare.
int Time(const std::vector<std::string>& args) {
  double ms = 0;
  int status = Spawn(args, -1, -1, &ms, Session::kNew);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::fprintf(stderr, "bench_syscalls: %s failed (status %d)\n", args[0].c_str(), status);
    return 2;
  }
  std::printf("%.3f\n", ms);
  return 0;
}

// An unnamed file in /tmp for a child's output.
int TemporaryFile() {
  char path[] = "/tmp/bench-syscalls.XXXXXX";
  int fd = ::mkstemp(path);
  if (fd < 0) Die("mkstemp");
  ::unlink(path);
  return fd;
}

// Runs `args` (an environment's prefix and this program) and reads the one
// number it prints; what it writes to stderr (corral's warnings) is shown
// only when it fails.
double Measure(const std::vector<std::string>& args) {
  int fd = TemporaryFile();
  int errors = TemporaryFile();
  int status = Spawn(args, fd, errors, nullptr);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::string line;
    for (const std::string& arg : args) line += arg + " ";
    std::fprintf(stderr, "bench_syscalls: failed (status %d): %s\n", status, line.c_str());
    char text[4096];
    ssize_t n = ::pread(errors, text, sizeof text, 0);
    if (n > 0) std::fwrite(text, 1, static_cast<size_t>(n), stderr);
    std::exit(2);
  }
  ::close(errors);
  char buffer[64] = {};
  ssize_t n = ::pread(fd, buffer, sizeof buffer - 1, 0);
  ::close(fd);
  if (n <= 0) Die("no measurement");
  return std::strtod(buffer, nullptr);
}

struct Environment {
  std::string name;
  std::vector<std::string> prefix;
};

struct Job {
  std::string name;
  std::string unit;
  std::vector<std::string> args;  // after this program's path
};

// bubblewrap with a view like corral's default one: the system trees
// read-only, the workspace writable, a fresh /dev, /proc and /tmp, every
// namespace.
std::vector<std::string> BubblewrapPrefix(const std::string& workspace) {
  std::vector<std::string> prefix = {"/usr/bin/bwrap", "--unshare-all", "--die-with-parent",
                                     "--ro-bind",      "/usr",          "/usr",
                                     "--ro-bind",      "/etc",          "/etc",
                                     "--dev",          "/dev",          "--proc",
                                     "/proc",          "--tmpfs",       "/tmp"};
  for (const char* top : {"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"}) {
    char target[256];
    ssize_t n = ::readlink(top, target, sizeof target - 1);
    if (n <= 0) continue;
    target[n] = '\0';
    prefix.insert(prefix.end(), {"--symlink", target, top});
  }
  prefix.insert(prefix.end(), {"--bind", workspace, workspace, "--chdir", workspace, "--"});
  return prefix;
}

int Drive(const std::string& corral, const std::string& workspace, int rounds, const std::string& baseline) {
  if (::chdir(workspace.c_str()) != 0) Die("chdir " + workspace);
  std::ofstream(kWorkspaceFile) << "corral\n";
  std::ofstream(kSource) << "#include <stdio.h>\n#include <string.h>\n"
                            "int main(int argc, char** argv) { printf(\"%zu\\n\", strlen(argv[argc - 1])); }\n";
  const std::string self = workspace + "/bench_syscalls";
  std::vector<Environment> environments = {
      {"bare", {}},
      {"corral run", {corral, "run", "--"}},
      {"bwrap", BubblewrapPrefix(workspace)},
  };
  if (!baseline.empty()) environments.push_back({"baseline corral run", {baseline, "run", "--"}});
  const std::string shell_path = "PATH=/usr/bin:/bin; ";
  std::vector<Job> jobs = {
      {"getppid()", "ns", {"loop", "getppid", "400000"}},
      {"open()+close() of a workspace file", "ns", {"loop", "open_close", "60000"}},
      {"open()+close() of /usr/include/stdio.h", "ns", {"loop", "open_usr", "60000"}},
      {"stat() of a workspace file", "ns", {"loop", "stat", "100000"}},
      {"find /usr -type f | wc -l", "ms", {"time", "/bin/sh", "-c", shell_path + "find /usr -type f | wc -l"}},
      {"cc -c of a small file", "ms", {"time", "/bin/sh", "-c", shell_path + "cc -O2 -c bench-compile.c -o bench.o"}},
  };
  // samples[job][environment]
  std::vector<std::vector<std::vector<double>>> samples(jobs.size(),
                                                        std::vector<std::vector<double>>(environments.size()));
  for (int round = 0; round <= rounds; ++round) {
    for (size_t j = 0; j < jobs.size(); ++j) {
      for (size_t e = 0; e < environments.size(); ++e) {
        std::vector<std::string> args = environments[e].prefix;
        args.push_back(self);
        args.insert(args.end(), jobs[j].args.begin(), jobs[j].args.end());
        double value = Measure(args);
        if (round > 0) samples[j][e].push_back(value);  // round 0 warms the caches
      }
    }
  }
  std::printf("%d interleaved rounds, the fastest of each (per operation, the fastest of 200 batches in a round)\n\n"
              "| operation |",
              rounds);
  for (const Environment& env : environments) std::printf(" %s |", env.name.c_str());
  std::printf(" corral / bare | bwrap / bare | corral / bwrap |");
  if (!baseline.empty()) std::printf(" corral / baseline |");
  std::printf("\n|---|");
  for (size_t e = 0; e < environments.size() + 3 + (baseline.empty() ? 0 : 1); ++e) std::printf("---|");
  std::printf("\n");
  for (size_t j = 0; j < jobs.size(); ++j) {
    std::vector<double> m;
    for (size_t e = 0; e < environments.size(); ++e) {
      m.push_back(*std::min_element(samples[j][e].begin(), samples[j][e].end()));
    }
    std::printf("| %s |", jobs[j].name.c_str());
    for (double value : m) {
      std::printf(jobs[j].unit == "ns" ? " %.0f %s |" : " %.1f %s |", value, jobs[j].unit.c_str());
    }
    std::printf(" %.2fx | %.2fx | %.2fx |", m[1] / m[0], m[2] / m[0], m[1] / m[2]);
    if (!baseline.empty()) std::printf(" %.2fx |", m[1] / m[3]);
    std::printf("\n");
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "loop" && argc == 4) return Loop(argv[2], std::atol(argv[3]));
  if (mode == "time" && argc > 2) return Time(std::vector<std::string>(argv + 2, argv + argc));
  if (mode == "drive" && argc >= 4) {
    return Drive(argv[2], argv[3], argc > 4 ? std::atoi(argv[4]) : 15, argc > 5 ? argv[5] : "");
  }
  std::fprintf(stderr,
               "usage: %s drive CORRAL WORKSPACE [ROUNDS] [BASELINE_CORRAL]\n"
               "       %s loop getppid|open_close|open_usr|stat N\n"
               "       %s time ARGV...\n",
               argv[0], argv[0], argv[0]);
  return 2;
}
