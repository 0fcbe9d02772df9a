// TIOCSTI on a pty the test owns: a denial means no byte reached the pty's
// input queue (read on the slave) and nothing was echoed (read on the master).
#include "harness.h"

namespace corral_it {
namespace {

using TerminalEscape = SandboxTest;

TEST_F(TerminalEscape, TiocstiCannotInjectIntoAPty) {
  // Control, where the host allows TIOCSTI at all: outside corral the probe
  // does inject.
  if (ReadFile("/proc/sys/dev/tty/legacy_tiocsti").value_or("1") != "0\n") {
    Pty bare;
    bare.NonCanonical();
    SpawnOptions options;
    options.stdin_fd = bare.slave();
    Execute({ProbePath("tiocsti")}, options);
    EXPECT_NE(bare.Injected().find('x'), std::string::npos);
  }
  Pty pty;
  pty.NonCanonical();
  SpawnOptions options;
  options.stdin_fd = pty.slave();
  EXPECT_PROBE_BLOCKED(Probe("tiocsti", {}, {}, options));
  EXPECT_EQ(pty.Injected(), "");
}

}  // namespace
}  // namespace corral_it
