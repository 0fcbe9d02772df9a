// The real-kernel test harness: runs the built `corral` binary and the escape
// probes, and gives the tests what they need to judge a run from OUTSIDE the
// sandbox (temporary trees, listeners, decoy processes, /proc scans).
//
// corral is found through $CORRAL_BIN (else the build tree's binary), the
// probes through $CORRAL_PROBES (else the build tree's escape directory).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace corral_it {

using namespace std::chrono_literals;

// The probes' verdicts (tests/escape/probes/probe.h).
inline constexpr int kProbeBlocked = 10;
inline constexpr int kProbeEscaped = 20;

// Canonical absolute paths (symlinks resolved) of corral and the probes.
const std::string& CorralBin();
const std::string& ProbesDir();
std::string ProbePath(const std::string& name);

// A fresh directory under /tmp, removed with everything in it.
class TempDir {
 public:
  explicit TempDir(const std::string& prefix = "corral-it");
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string operator/(const std::string& relative) const { return path_ + "/" + relative; }
  // Writes `relative` (creating parent directories).
  void Write(const std::string& relative, const std::string& content, mode_t mode = 0644) const;
  void Mkdir(const std::string& relative) const;
  // Every path below the directory, relative, directories with a trailing '/'.
  std::set<std::string> Listing() const;

 private:
  std::string path_;
};

// A file's bytes, or nullopt when it cannot be read.
std::optional<std::string> ReadFile(const std::string& path);
void WriteFile(const std::string& path, const std::string& content, mode_t mode = 0644);
bool Exists(const std::string& path);  // lstat: a dangling symlink exists
std::string RandomToken(const std::string& prefix);

struct SpawnOptions {
  std::string cwd;                          // default: the caller's
  std::map<std::string, std::string> env;   // added to (or overriding) the caller's environment
  std::vector<std::string> unset_env;
  int stdin_fd = -1;                        // default: /dev/null
  int stderr_fd = -1;                       // default: captured
  int stdout_fd = -1;                       // default: captured
  std::chrono::milliseconds timeout = 60s;  // then SIGKILL, and timed_out
  // The child calls setsid(), so it starts with no controlling terminal...
  bool new_session = false;
  // ...and, given a terminal's fd (Pty::slave()), makes that terminal its
  // controlling one (TIOCSCTTY): /dev/tty then resolves to it. Implies
  // new_session. stdout and stderr stay captured unless given.
  int controlling_tty = -1;
};

struct Outcome {
  int exit_code = -1;  // -1 when killed by a signal
  int signal = 0;
  bool timed_out = false;
  std::string out, err;
  std::chrono::milliseconds elapsed{0};
  // For assertion messages.
  std::string Describe() const;
};

// A child process with stdout and stderr captured (in memory files, so
// nothing blocks on a full pipe).
class Process {
 public:
  Process(const std::vector<std::string>& argv, const SpawnOptions& options);
  ~Process();
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  pid_t pid() const { return pid_; }
  // Waits for the exit (SIGKILL at the timeout). Idempotent.
  const Outcome& Wait();
  // True until the child has exited (it is not reaped: Wait still works).
  bool Running() const;
  std::string OutputSoFar() const;

 private:
  pid_t pid_ = -1;
  int out_fd_ = -1, err_fd_ = -1;
  bool waited_ = false;
  std::chrono::steady_clock::time_point start_;
  std::chrono::milliseconds timeout_;
  Outcome outcome_;
};

Outcome Execute(const std::vector<std::string>& argv, const SpawnOptions& options = {});

// Options that add `env` to the caller's environment.
SpawnOptions WithEnv(std::map<std::string, std::string> env);

// Polls `done` every 10 ms until it holds or `limit` passes.
bool WaitFor(const std::function<bool()>& done, std::chrono::milliseconds limit);

// Pids of live processes (not zombies, not this one) whose command line (NUL
// separated, as in /proc/PID/cmdline) contains `needle`, or starts with `prefix`.
std::vector<pid_t> ProcessesMatching(const std::string& needle);
std::vector<pid_t> ProcessesStartingWith(const std::string& prefix);
// The NUL-separated command line of `argv`.
std::string CommandLine(const std::vector<std::string>& argv);
// One field of /proc/PID/status ("CapEff", "NoNewPrivs", ...), trimmed.
std::optional<std::string> StatusField(pid_t pid, const std::string& field);
// PID's parent (PPid), or -1.
pid_t ParentOf(pid_t pid);
// What /proc/PID/ns/KIND links to ("net:[4026531840]"), or "unreadable".
std::string NamespaceOf(pid_t pid, const std::string& kind);
// The octal modes ("444") of `entries` (paths below /proc: "version",
// "tty/drivers"), one per line, as a procfs mounted now shows them (through
// util-linux's unshare, in namespaces of its own). The kernel keeps one mode
// per such entry for every procfs; the host's own /proc may show an older
// one until its inode is dropped, a fresh one never does.
std::string FreshProcModes(const std::vector<std::string>& entries);
// Sets each entry's mode back to `mode` (0444) in a fresh procfs, for a test
// that saw it changed: only root, the entries' owner, can.
void RestoreProcModes(const std::vector<std::string>& entries, const std::string& mode);
// Runs `body` in a child process that is a subreaper
// (PR_SET_CHILD_SUBREAPER): whatever the runs it starts leave behind is
// passed to it. 300 ms after `body` returns (what those runs leave arrives
// within moments of their exit), it counts the processes it inherited,
// zombie or not. `result` is what `body` returned (0 to 127); both are -1
// when the child failed.
struct Inherited {
  int result = -1;
  int count = -1;
};
Inherited UnderSubreaper(const std::function<int()>& body);
// What the seccomp filter corral installs (the embedded one, which
// Layer.InstalledSeccompFilterIsTheEmbeddedOne compares with the installed
// program) answers to syscall `nr` with first argument `arg0`, on x86_64,
// with the network off and on: a check of corral's filter made by the test,
// not by the confined process. EXPECTs the same answer for both.
uint32_t EmbeddedFilterVerdict(int nr, uint64_t arg0 = 0);

// A pseudo-terminal the test owns: it reads what a program shows on the
// master and types answers into it. The slave can be given to a child as its
// controlling terminal (SpawnOptions::controlling_tty).
class Pty {
 public:
  Pty();  // canonical input, as a terminal starts
  ~Pty();
  Pty(const Pty&) = delete;
  Pty& operator=(const Pty&) = delete;

  int slave() const { return slave_; }
  int master() const { return master_; }
  // Non-canonical with echo: an injected byte is readable at once on the
  // slave and echoed to the master.
  void NonCanonical() const;
  // Whatever is waiting on either side, after up to 300 ms.
  std::string Injected() const;
  // Everything the master has shown so far, after reading what waits there
  // for up to `wait`.
  const std::string& Transcript(std::chrono::milliseconds wait = 0ms);
  // Types `text` at the terminal.
  void Type(const std::string& text) const;
  // Reads and drops what the master shows for `wait`; returns how many bytes.
  size_t Discard(std::chrono::milliseconds wait) const;

 private:
  int master_ = -1, slave_ = -1;
  std::string transcript_;
};

// Listeners in the test process (the host side).
class Listener {
 public:
  static Listener Tcp();                               // 127.0.0.1, an ephemeral port
  static Listener Udp();                               // 127.0.0.1, an ephemeral port
  static Listener UnixPath(const std::string& path);   // a pathname socket
  static Listener UnixAbstract(const std::string& name);
  Listener(Listener&& other) noexcept;
  ~Listener();

  int port() const { return port_; }
  // True when a connection is waiting (stream) or a datagram arrived.
  bool GotSomething() const;

 private:
  // A loopback socket of `type` on an ephemeral port; listening when a stream.
  static Listener Inet(int type);
  Listener(int fd, int port, bool stream) : fd_(fd), port_(port), stream_(stream) {}
  int fd_ = -1;
  int port_ = 0;
  bool stream_ = true;
};

// A host process the sandbox must not reach. It records every signal it
// receives (SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGCONT) in a pipe.
class Decoy {
 public:
  // A forked child that waits for signals.
  static Decoy Catcher();
  // `sleep` with exactly `env` as its environment.
  static Decoy Sleeper(const std::vector<std::string>& env);
  Decoy(Decoy&& other) noexcept;
  ~Decoy();

  pid_t pid() const { return pid_; }
  bool Alive();
  // Signal numbers the catcher has seen.
  std::vector<int> SignalsReceived() const;

 private:
  Decoy(pid_t pid, int signals_fd) : pid_(pid), signals_fd_(signals_fd) {}
  pid_t pid_ = -1;
  int signals_fd_ = -1;
  bool reaped_ = false;
};

// The audit trail, one JSON object per line.
std::vector<nlohmann::json> ReadAudit(const std::string& path);

// A fixture with a workspace and a directory outside it, and helpers to run
// corral with the workspace as its working directory. Every run writes its
// audit trail to a fresh file outside the workspace (audit_path()).
class SandboxTest : public ::testing::Test {
 protected:
  SandboxTest();

  // `corral ARGS...` from the workspace.
  Outcome Corral(const std::vector<std::string>& args, SpawnOptions options = {});
  // `corral run --audit FILE GRANTS... -- COMMAND...`.
  Outcome RunIn(const std::vector<std::string>& grants, const std::vector<std::string>& command,
                SpawnOptions options = {});
  // Runs probe NAME with ARGS under the default policy plus `grants` and an
  // exec grant on the probes directory.
  Outcome Probe(const std::string& name, const std::vector<std::string>& args,
                const std::vector<std::string>& grants = {}, SpawnOptions options = {});
  // The argv RunIn would use, for a Process the test drives itself.
  std::vector<std::string> RunArgv(const std::vector<std::string>& grants, const std::vector<std::string>& command);
  std::vector<std::string> ProbeArgv(const std::string& name, const std::vector<std::string>& args,
                                     const std::vector<std::string>& grants = {});
  SpawnOptions Defaults(SpawnOptions options) const;

  const std::string& audit_path() const { return audit_path_; }
  std::vector<nlohmann::json> Audit() const { return ReadAudit(audit_path_); }
  // The records of the last run whose "event" is `event`.
  std::vector<nlohmann::json> AuditEvents(const std::string& event) const;

  TempDir workspace_{"corral-ws"};
  TempDir outside_{"corral-outside"};
  TempDir state_{"corral-state"};  // $XDG_STATE_HOME: the quarantine and the sessions land here
  TempDir config_{"corral-config"};  // $XDG_CONFIG_HOME: the user config is config_/corral/config.toml

 private:
  std::string NextAuditPath();
  std::string audit_path_;
  int runs_ = 0;
};

// Asserts a probe ran and reported that every attempt was blocked.
#define EXPECT_PROBE_BLOCKED(outcome_expr)                                    \
  do {                                                                         \
    const ::corral_it::Outcome& probe_outcome_ = (outcome_expr);               \
    EXPECT_EQ(probe_outcome_.exit_code, ::corral_it::kProbeBlocked) << probe_outcome_.Describe(); \
  } while (0)

}  // namespace corral_it
