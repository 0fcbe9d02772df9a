// TIOCSTI on a pty the test owns: a denial means no byte reached the pty's
// input queue (read on the slave) and nothing was echoed (read on the master).
#include <linux/audit.h>
#include <linux/seccomp.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>

#include <iostream>

#include "harness.h"
#include "kernel/bpf_evaluator.h"
#include "kernel/seccomp.h"

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
  } else {
    // The kernel refuses TIOCSTI itself here, so the pty alone cannot show
    // corral's filter at work: said, and the filter's verdict checked.
    std::cerr << "[ NOTE ] legacy_tiocsti=0: the kernel refuses TIOCSTI itself; checking corral's filter verdict\n";
    seccomp_data call = {};
    call.nr = SYS_ioctl;
    call.arch = AUDIT_ARCH_X86_64;
    call.args[1] = TIOCSTI;
    corral::Result<uint32_t> action =
        corral::EvaluateBpf(corral::EmbeddedSeccompFilter(corral::SeccompOptions{false}), call);
    ASSERT_TRUE(action.ok());
    EXPECT_EQ(*action, SECCOMP_RET_ERRNO | EPERM);
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
