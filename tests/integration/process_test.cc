// Other processes and privileges, judged from outside: the decoy is alive and
// saw no signal; the confined process's /proc/PID/status (capabilities,
// no_new_privs, its seccomp filters), read by the test.
#include <signal.h>
#include <unistd.h>

#include <sstream>

#include "harness.h"

namespace corral_it {
namespace {

using ProcessEscape = SandboxTest;

TEST_F(ProcessEscape, SignallingAHostProcessFails) {
  // Control: outside corral the probe does reach a decoy.
  Decoy reachable = Decoy::Catcher();
  Execute({ProbePath("kill_decoy"), std::to_string(reachable.pid())});
  EXPECT_TRUE(WaitFor([&] { return !reachable.SignalsReceived().empty(); }, 5s));

  Decoy decoy = Decoy::Catcher();
  EXPECT_PROBE_BLOCKED(Probe("kill_decoy", {std::to_string(decoy.pid())}));
  EXPECT_TRUE(decoy.Alive());
  EXPECT_EQ(decoy.SignalsReceived(), std::vector<int>{});
}

TEST_F(ProcessEscape, PtracingAHostProcessFails) {
  // Control: outside corral the probe attaches to a decoy and kills it.
  Decoy reachable = Decoy::Catcher();
  Execute({ProbePath("ptrace_decoy"), std::to_string(reachable.pid())});
  EXPECT_TRUE(WaitFor([&] { return !reachable.Alive(); }, 5s));

  Decoy decoy = Decoy::Catcher();
  EXPECT_PROBE_BLOCKED(Probe("ptrace_decoy", {std::to_string(decoy.pid())}));
  EXPECT_TRUE(decoy.Alive());
  EXPECT_EQ(decoy.SignalsReceived(), std::vector<int>{});
}

// A decimal status field, or -1 when it is missing or not a number.
long Count(const std::optional<std::string>& field) {
  if (!field || field->empty() || field->find_first_not_of("0123456789") != std::string::npos) return -1;
  return std::stol(*field);
}

size_t Levels(const std::optional<std::string>& nspid) {
  size_t levels = 0;
  std::istringstream in(nspid.value_or(""));
  for (std::string pid; in >> pid;) ++levels;
  return levels;
}

TEST_F(ProcessEscape, ConfinedProcessHasNoPrivilegesAsSeenFromOutside) {
  std::string token = RandomToken("sleeper");
  Process run(ProbeArgv("sleeper", {token}), Defaults({}));
  std::vector<pid_t> found;
  ASSERT_TRUE(WaitFor([&] { return (found = ProcessesStartingWith(CommandLine({ProbePath("sleeper"), token}))).size() == 1; },
                      10s))
      << run.OutputSoFar();
  pid_t pid = found[0];
  for (const char* set : {"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"}) {
    EXPECT_EQ(StatusField(pid, set), "0000000000000000") << set;
  }
  EXPECT_EQ(StatusField(pid, "NoNewPrivs"), "1");
  // A seccomp filter is installed (mode 2), and it is corral's: the confined
  // process holds more filters than this test process, so one inherited from
  // whatever runs the tests does not count.
  EXPECT_EQ(StatusField(pid, "Seccomp"), "2");
  long own_filters = Count(StatusField(::getpid(), "Seccomp_filters"));
  EXPECT_GE(own_filters, 0) << "this kernel shows no Seccomp_filters in /proc/PID/status";
  EXPECT_GE(Count(StatusField(pid, "Seccomp_filters")), own_filters + 1);
  // One PID namespace deeper than the test: NSpid has one more level.
  EXPECT_EQ(Levels(StatusField(pid, "NSpid")), Levels(StatusField(::getpid(), "NSpid")) + 1);
  for (const char* kind : {"user", "mnt", "pid", "ipc", "uts", "net"}) {
    std::string inside = NamespaceOf(pid, kind);
    EXPECT_NE(inside, "unreadable") << kind;
    EXPECT_NE(inside, NamespaceOf(::getpid(), kind)) << kind;
  }
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  const Outcome& outcome = run.Wait();
  EXPECT_EQ(outcome.exit_code, 128 + SIGKILL) << outcome.Describe();
}

// --best-effort without namespaces (here: corral inside corral, where the
// outer filter refuses new namespaces) still empties every capability set
// and sets no_new_privs, also for an unprivileged caller who cannot touch
// the bounding set. Judged from outside, on the inner command's /proc entry.
TEST_F(ProcessEscape, BestEffortWithoutNamespacesStillDropsPrivileges) {
  std::string token = RandomToken("sleeper");
  std::vector<std::string> inner = {CorralBin(), "run", "--best-effort", "--allow-exec", ProbesDir(), "--",
                                    ProbePath("sleeper"), token};
  Process run(RunArgv({"--allow-exec", CorralBin(), "--allow-exec", ProbesDir()}, inner), Defaults({}));
  std::vector<pid_t> found;
  ASSERT_TRUE(WaitFor([&] { return (found = ProcessesStartingWith(CommandLine({ProbePath("sleeper"), token}))).size() == 1; },
                      10s))
      << run.OutputSoFar();
  pid_t pid = found[0];
  for (const char* set : {"CapInh", "CapPrm", "CapEff", "CapAmb"}) {
    EXPECT_EQ(StatusField(pid, set), "0000000000000000") << set;
  }
  EXPECT_EQ(StatusField(pid, "NoNewPrivs"), "1");
  EXPECT_EQ(StatusField(pid, "Seccomp"), "2");
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  const Outcome& outcome = run.Wait();
  EXPECT_EQ(outcome.exit_code, 128 + SIGKILL) << outcome.Describe();
  // The inner run says what it dropped, in its one stderr line (its trail
  // is a file in its own state directory now, not its stderr).
  EXPECT_NE(outcome.err.find("corral: degraded run (--best-effort): it ran without namespaces"), std::string::npos)
      << outcome.Describe();
}

}  // namespace
}  // namespace corral_it
