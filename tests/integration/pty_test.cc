// `corral run` on a terminal, as a person uses it (pty_relay.h): corral's stdin, stdout and
// stderr are a pty the test owns (its controlling terminal too), and the test
// types at the master and reads what shows there. The command must get a pty
// of its own (job control, `tty`, the window size, ^C) and hold no
// descriptor of the test's terminal, judged from outside through
// /proc/PID/fd; the test's terminal must be as it was after every way a run
// ends.
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <termios.h>
#include <unistd.h>

#include <dirent.h>

#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "harness.h"

namespace corral_it {
namespace {

using InteractivePty = SandboxTest;

struct Modes {
  struct termios modes = {};
  static Modes Of(int fd) {
    Modes m;
    EXPECT_EQ(::tcgetattr(fd, &m.modes), 0);
    return m;
  }
  bool operator==(const Modes& other) const {
    return modes.c_iflag == other.modes.c_iflag && modes.c_oflag == other.modes.c_oflag &&
           modes.c_cflag == other.modes.c_cflag && modes.c_lflag == other.modes.c_lflag &&
           std::memcmp(modes.c_cc, other.modes.c_cc, sizeof modes.c_cc) == 0;
  }
};

// The terminal the test owns, set up as a person's: corral's stdin, stdout,
// stderr and controlling terminal, with a window size.
class Terminal {
 public:
  Terminal(unsigned short rows, unsigned short columns) {
    Resize(rows, columns);
    options_.stdin_fd = pty_.slave();
    options_.stdout_fd = pty_.slave();
    options_.stderr_fd = pty_.slave();
    options_.controlling_tty = pty_.slave();
    options_.timeout = 60s;
  }
  // The kernel signals SIGWINCH to corral, the terminal's foreground job.
  void Resize(unsigned short rows, unsigned short columns) const {
    struct winsize size = {};
    size.ws_row = rows;
    size.ws_col = columns;
    EXPECT_EQ(::ioctl(pty_.master(), TIOCSWINSZ, &size), 0);
  }
  // Types `line`, then waits until `expect` shows (output only: the typed
  // text is chosen so that its echo never contains `expect`).
  bool TypeAndSee(const std::string& line, const std::string& expect, std::chrono::milliseconds limit = 15s) {
    pty_.Type(line);
    return See(expect, limit);
  }
  bool See(const std::string& expect, std::chrono::milliseconds limit = 15s) {
    return WaitFor([&] { return pty_.Transcript(20ms).find(expect) != std::string::npos; }, limit);
  }
  Pty& pty() { return pty_; }
  const SpawnOptions& options() const { return options_; }

 private:
  Pty pty_;
  SpawnOptions options_;
};

// (st_dev, st_ino) of every descriptor of `pid`, read from outside through
// /proc/PID/fd; empty when the directory cannot be read.
std::vector<std::pair<int, struct stat>> Descriptors(pid_t pid) {
  std::vector<std::pair<int, struct stat>> found;
  std::string dir = "/proc/" + std::to_string(pid) + "/fd";
  DIR* listing = ::opendir(dir.c_str());
  if (listing == nullptr) return found;
  while (struct dirent* entry = ::readdir(listing)) {
    if (entry->d_name[0] == '.') continue;
    struct stat st;
    if (::stat((dir + "/" + entry->d_name).c_str(), &st) == 0) found.emplace_back(std::atoi(entry->d_name), st);
  }
  ::closedir(listing);
  return found;
}

// The one live process named `comm` whose command line holds `token`.
pid_t FindProcess(const std::string& token, const std::string& comm) {
  pid_t found = -1;
  WaitFor(
      [&] {
        for (pid_t pid : ProcessesMatching(token)) {
          std::string name = ReadFile("/proc/" + std::to_string(pid) + "/comm").value_or("");
          if (name == comm + "\n") found = pid;
        }
        return found > 0;
      },
      10s);
  return found;
}

// An interactive bash in the sandbox, driven as a person would: it has job
// control (no "no job control" complaint, `set -o monitor` on, a background
// job listed by `jobs`, ^C interrupts the foreground job only), `tty` names
// its own pty, `stty size` shows the terminal's size and follows a resize,
// and its exit status is corral's. From outside, while it runs: neither it
// nor the sandbox's init holds a descriptor of the test's terminal, its
// stdin is a pty of another devpts instance, and the test's terminal is in
// raw mode; after the run, the terminal's modes are as before. (Init's
// descriptors are listed as root; init is non-dumpable, so to another caller
// they are unreadable, which is checked instead.)
TEST_F(InteractivePty, BashHasJobControlOnAPtyOfItsOwn) {
  Terminal terminal(33, 101);
  Modes before = Modes::Of(terminal.pty().slave());
  struct stat real;
  ASSERT_EQ(::fstat(terminal.pty().slave(), &real), 0);
  const std::string token = RandomToken("pty");
  Process corral(RunArgv({}, {"bash", "--norc", "--noprofile", "-i", "-s", token}), Defaults(terminal.options()));

  ASSERT_TRUE(terminal.TypeAndSee("echo READY-$((6*7))\n", "READY-42")) << terminal.pty().Transcript();
  Modes raw = Modes::Of(terminal.pty().slave());
  EXPECT_EQ(raw.modes.c_lflag & (ICANON | ECHO | ISIG), 0u) << "corral relays with the terminal in raw mode";

  pid_t bash = FindProcess(token, "bash");
  ASSERT_GT(bash, 0);
  pid_t init = ParentOf(bash);
  ASSERT_GT(init, 0);
  // Init is non-dumpable: only root can list its descriptors from outside;
  // to its own user (and to the command) they are closed.
  std::vector<pid_t> listed = {bash};
  if (::geteuid() == 0) {
    listed.push_back(init);
  } else {
    EXPECT_TRUE(Descriptors(init).empty()) << "init's descriptors are readable to its user";
  }
  for (pid_t pid : listed) {
    std::vector<std::pair<int, struct stat>> fds = Descriptors(pid);
    ASSERT_FALSE(fds.empty()) << "cannot list /proc/" << pid << "/fd";
    for (const auto& [fd, st] : fds) {
      EXPECT_FALSE(st.st_dev == real.st_dev && st.st_ino == real.st_ino)
          << "pid " << pid << " (" << (pid == bash ? "the command" : "init") << ") holds the caller's terminal on fd "
          << fd;
    }
  }
  std::vector<std::pair<int, struct stat>> fds = Descriptors(bash);
  bool stdin_is_own_pty = false;
  for (const auto& [fd, st] : fds) {
    if (fd == 0) stdin_is_own_pty = S_ISCHR(st.st_mode) && major(st.st_rdev) >= 136 && major(st.st_rdev) <= 143 &&
                                    st.st_dev != real.st_dev;
  }
  EXPECT_TRUE(stdin_is_own_pty) << "stdin is a pty of another devpts instance";

  EXPECT_TRUE(terminal.TypeAndSee("tty; [[ -o monitor ]] && echo JOB-CONTROL-$((1+1))\n", "JOB-CONTROL-2"))
      << terminal.pty().Transcript();
  EXPECT_NE(terminal.pty().Transcript().find("/dev/pts/"), std::string::npos) << terminal.pty().Transcript();
  EXPECT_EQ(terminal.pty().Transcript().find("not a tty"), std::string::npos) << terminal.pty().Transcript();
  EXPECT_TRUE(terminal.TypeAndSee("stty size\n", "33 101")) << terminal.pty().Transcript();
  terminal.Resize(40, 120);
  std::this_thread::sleep_for(300ms);
  EXPECT_TRUE(terminal.TypeAndSee("stty size\n", "40 120")) << terminal.pty().Transcript();

  EXPECT_TRUE(terminal.TypeAndSee("sleep 30 & jobs; echo JOBS-$((2+2))\n", "JOBS-4")) << terminal.pty().Transcript();
  EXPECT_NE(terminal.pty().Transcript().find("Running"), std::string::npos) << terminal.pty().Transcript();
  // ^C at the terminal: the foreground sleep ends at once, the shell stays.
  terminal.pty().Type("sleep 30\n");
  std::this_thread::sleep_for(500ms);
  terminal.pty().Type("\x03");
  EXPECT_TRUE(terminal.TypeAndSee("echo AFTER-$((2+3))\n", "AFTER-5", 10s)) << terminal.pty().Transcript();
  EXPECT_TRUE(terminal.TypeAndSee("kill %1; exit 7\n", "exit")) << terminal.pty().Transcript();

  const Outcome& outcome = corral.Wait();
  std::string transcript = terminal.pty().Transcript(200ms);
  EXPECT_EQ(outcome.exit_code, 7) << outcome.Describe() << transcript;
  EXPECT_EQ(transcript.find("no job control"), std::string::npos) << transcript;
  EXPECT_EQ(transcript.find("cannot set terminal process group"), std::string::npos) << transcript;
  EXPECT_TRUE(Modes::Of(terminal.pty().slave()) == before) << "the terminal's modes are put back";
}

// danger-full-access has no sandbox, but an interactive run still gets a pty
// of its own (the host's devpts then): the command holds none of the
// caller's terminal, `stty size` is the terminal's, and typed input reaches it.
TEST_F(InteractivePty, AnUnconfinedRunGetsAPtyToo) {
  Terminal terminal(30, 90);
  struct stat real;
  ASSERT_EQ(::fstat(terminal.pty().slave(), &real), 0);
  const std::string token = RandomToken("pty-danger");
  Process corral(RunArgv({"--mode", "danger-full-access", "--i-understand-danger-full-access"},
                         {"sh", "-c", "stty size; read line; echo \"GOT-$line\"; exit 3", token}),
                 Defaults(terminal.options()));
  ASSERT_TRUE(terminal.See("30 90")) << terminal.pty().Transcript();
  pid_t sh = FindProcess(token, "sh");
  ASSERT_GT(sh, 0);
  std::vector<std::pair<int, struct stat>> fds = Descriptors(sh);
  ASSERT_FALSE(fds.empty());
  for (const auto& [fd, st] : fds) {
    EXPECT_FALSE(st.st_dev == real.st_dev && st.st_ino == real.st_ino) << "the caller's terminal on fd " << fd;
  }
  EXPECT_TRUE(terminal.TypeAndSee("typed\r", "GOT-typed")) << terminal.pty().Transcript();
  EXPECT_EQ(corral.Wait().exit_code, 3) << corral.Wait().Describe();
}

// Every byte the command writes reaches the terminal as it is: the relay
// copies and interprets nothing (the 256 byte values, with the pty raw
// inside, arrive in order and unchanged).
TEST_F(InteractivePty, TheRelayCopiesEveryByteUnchanged) {
  Terminal terminal(24, 80);
  std::string format, expected;
  for (int byte = 0; byte < 256; ++byte) {
    char octal[8];
    std::snprintf(octal, sizeof octal, "\\%03o", byte);
    format += octal;
    expected += static_cast<char>(byte);
  }
  Process corral(RunArgv({}, {"sh", "-c", "stty raw -echo; printf 'BEGIN'; printf \"$0\"; printf 'END'", format}),
                 Defaults(terminal.options()));
  EXPECT_TRUE(terminal.See("END")) << terminal.pty().Transcript();
  const Outcome& outcome = corral.Wait();
  EXPECT_EQ(outcome.exit_code, 0) << outcome.Describe();
  std::string transcript = terminal.pty().Transcript(200ms);
  size_t begin = transcript.find("BEGIN");
  ASSERT_NE(begin, std::string::npos) << transcript;
  EXPECT_EQ(transcript.substr(begin + 5, 256), expected);
}

// A writer that never stops, left behind by a command that exits, does not
// keep corral: the tree is killed and what the pty holds is bounded, so
// corral exits with the command's status at once, the terminal put back.
TEST_F(InteractivePty, AnEndlessWriterLeftBehindDoesNotKeepCorral) {
  Terminal terminal(24, 80);
  Modes before = Modes::Of(terminal.pty().slave());
  Process corral(RunArgv({}, {"sh", "-c", "(yes &); sleep 1; exit 5"}), Defaults(terminal.options()));
  size_t shown = 0;
  auto start = std::chrono::steady_clock::now();
  while (corral.Running() && std::chrono::steady_clock::now() - start < 30s) shown += terminal.pty().Discard(50ms);
  const Outcome& outcome = corral.Wait();
  EXPECT_EQ(outcome.exit_code, 5) << outcome.Describe();
  EXPECT_LT(outcome.elapsed, 15s) << outcome.Describe();
  EXPECT_GT(shown, 0u);
  EXPECT_TRUE(Modes::Of(terminal.pty().slave()) == before);
}

// A run ended by a signal to corral (SIGHUP, as when the terminal's window
// closes) or by --timeout puts the terminal back too, and corral reports
// the command's end (129) or the timeout.
TEST_F(InteractivePty, ASignalOrATimeoutPutsTheTerminalBack) {
  {
    Terminal terminal(24, 80);
    Modes before = Modes::Of(terminal.pty().slave());
    const std::string token = RandomToken("pty-hup");
    Process corral(RunArgv({}, {"bash", "--norc", "--noprofile", "-i", "-s", token}), Defaults(terminal.options()));
    ASSERT_TRUE(terminal.TypeAndSee("echo UP-$((3*3))\n", "UP-9")) << terminal.pty().Transcript();
    EXPECT_FALSE(Modes::Of(terminal.pty().slave()) == before) << "raw while it runs";
    ::kill(corral.pid(), SIGHUP);
    const Outcome& outcome = corral.Wait();
    EXPECT_EQ(outcome.exit_code, 129) << outcome.Describe() << terminal.pty().Transcript(100ms);
    EXPECT_TRUE(Modes::Of(terminal.pty().slave()) == before);
  }
  {
    Terminal terminal(24, 80);
    Modes before = Modes::Of(terminal.pty().slave());
    Process corral(RunArgv({"--timeout", "2"}, {"sleep", "30"}), Defaults(terminal.options()));
    const Outcome& outcome = corral.Wait();
    EXPECT_FALSE(outcome.timed_out) << outcome.Describe();
    EXPECT_NE(outcome.exit_code, 0) << outcome.Describe();
    EXPECT_LT(outcome.elapsed, 20s);
    EXPECT_NE(terminal.pty().Transcript(200ms).find("timeout"), std::string::npos) << terminal.pty().Transcript();
    EXPECT_TRUE(Modes::Of(terminal.pty().slave()) == before);
  }
}

// A hostile command cannot pin corral with the terminal raw: one that
// stopped itself (SIGSTOP) or ignores every forwarded signal still ends when
// the person signals corral (SIGHUP as when the window closes, then SIGTERM,
// twice), and the terminal is put back. Otherwise only SIGKILL ends corral,
// which leaves the terminal raw. Found by the red team; fails until corral
// ends the sandbox itself (SIGCONT with a forwarded signal for the stopped
// one, a kill when the signal is repeated or the terminal hung up).
TEST_F(InteractivePty, ACommandThatIgnoresOrStopsCannotKeepCorral) {
  const std::vector<std::vector<std::string>> commands = {
      {"sh", "-c", "echo STOPPING; kill -STOP $$; echo after"},
      {"sh", "-c", "trap '' HUP TERM INT QUIT; echo IGNORING; while :; do sleep 1; done"},
  };
  for (const std::vector<std::string>& command : commands) {
    Terminal terminal(24, 80);
    Modes before = Modes::Of(terminal.pty().slave());
    Process corral(RunArgv({}, command), Defaults(terminal.options()));
    ASSERT_TRUE(terminal.See("ING")) << terminal.pty().Transcript();
    std::this_thread::sleep_for(300ms);
    auto signalled = std::chrono::steady_clock::now();
    for (int sig : {SIGHUP, SIGTERM, SIGTERM}) {
      if (!corral.Running()) break;
      ::kill(corral.pid(), sig);
      WaitFor([&] { return !corral.Running(); }, 3s);
    }
    bool ended = WaitFor([&] { return !corral.Running(); }, 5s);
    auto took = std::chrono::steady_clock::now() - signalled;
    EXPECT_TRUE(ended) << command[2] << ": corral still runs " << std::chrono::duration_cast<std::chrono::seconds>(took).count()
                       << "s after SIGHUP, SIGTERM, SIGTERM";
    EXPECT_TRUE(Modes::Of(terminal.pty().slave()) == before) << command[2] << ": the terminal is still raw";
    if (!ended) ::kill(corral.pid(), SIGKILL);
    corral.Wait();
  }
}

// Without a terminal on stdin nothing changes: no pty, `tty` says so. With
// stdin a terminal and stdout a pipe (`corral run -- git log | less`, the
// pager sharing the terminal) nothing changes either: corral leaves the
// terminal's modes alone while the command runs, and the command's stdin is
// the caller's terminal, as before.
TEST_F(InteractivePty, WithoutATerminalOnStdinAndStdoutThereIsNoPty) {
  Outcome outcome = RunIn({}, {"tty"});
  EXPECT_EQ(outcome.exit_code, 1) << outcome.Describe();
  EXPECT_NE(outcome.out.find("not a tty"), std::string::npos) << outcome.Describe();

  Pty pty;
  Modes before = Modes::Of(pty.slave());
  struct stat real;
  ASSERT_EQ(::fstat(pty.slave(), &real), 0);
  SpawnOptions options;
  options.stdin_fd = pty.slave();
  options.stderr_fd = pty.slave();
  options.controlling_tty = pty.slave();
  const std::string token = RandomToken("pty-pipe");
  Process corral(RunArgv({}, {"sh", "-c", "sleep 30; exit 0", token}), Defaults(options));
  pid_t sh = FindProcess(token, "sh");
  ASSERT_GT(sh, 0);
  EXPECT_TRUE(Modes::Of(pty.slave()) == before) << "the terminal is left as it is";
  bool stdin_is_callers = false;
  for (const auto& [fd, st] : Descriptors(sh)) {
    if (fd == 0) stdin_is_callers = st.st_dev == real.st_dev && st.st_ino == real.st_ino;
  }
  EXPECT_TRUE(stdin_is_callers);
  ::kill(corral.pid(), SIGTERM);
  EXPECT_EQ(corral.Wait().exit_code, 143) << corral.Wait().Describe();
}

}  // namespace
}  // namespace corral_it
