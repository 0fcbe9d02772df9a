// Kernel interfaces the filter denies. The probe must run and see every
// attempt fail; where an attempt would leave a trace (a mount, a chroot, a
// key, an exec'd payload) the trace is checked on the host.
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "harness.h"

namespace corral_it {
namespace {

class KernelEscape : public SandboxTest {
 protected:
  // The run was killed by SIGSYS (the filter's kill action), as relayed by
  // corral and recorded in the audit trail.
  void ExpectKilledBySigsys(const Outcome& outcome) {
    EXPECT_EQ(outcome.exit_code, 128 + SIGSYS) << outcome.Describe();
    std::vector<nlohmann::json> audit = Audit();
    ASSERT_FALSE(audit.empty());
    EXPECT_EQ(audit.back()["event"], "exited");
    EXPECT_EQ(audit.back()["signal"], SIGSYS);
    EXPECT_EQ(audit.back()["code"], 128 + SIGSYS);
  }
};

TEST_F(KernelEscape, IoUringIsDenied) { EXPECT_PROBE_BLOCKED(Probe("io_uring", {})); }
TEST_F(KernelEscape, BpfIsDenied) { EXPECT_PROBE_BLOCKED(Probe("bpf", {})); }
TEST_F(KernelEscape, UserfaultfdIsDenied) { EXPECT_PROBE_BLOCKED(Probe("userfaultfd", {})); }
TEST_F(KernelEscape, PerfEventOpenIsDenied) { EXPECT_PROBE_BLOCKED(Probe("perf_event", {})); }
TEST_F(KernelEscape, UnshareOfAUserNamespaceIsDenied) { EXPECT_PROBE_BLOCKED(Probe("unshare_user", {})); }
TEST_F(KernelEscape, OpenByHandleAtIsDenied) { EXPECT_PROBE_BLOCKED(Probe("open_by_handle", {})); }

TEST_F(KernelEscape, KeyringsAreUnreachable) {
  std::string description = RandomToken("corral-key");
  EXPECT_PROBE_BLOCKED(Probe("keyctl", {description}));
  constexpr long kKeyctlSearch = 10;
  for (long keyring : {-3L /* session */, -4L /* user */}) {
    EXPECT_LT(::syscall(SYS_keyctl, kKeyctlSearch, keyring, "user", description.c_str(), 0L), 0) << keyring;
  }
}

TEST_F(KernelEscape, MountIsDeniedAndTheHostSeesNoMount) {
  workspace_.Mkdir("mnt");
  EXPECT_PROBE_BLOCKED(Probe("mount", {workspace_ / "mnt", "marker"}));
  // The file written after the attempt landed in the real directory.
  EXPECT_TRUE(Exists(workspace_ / "mnt/marker"));
  EXPECT_EQ(ReadFile("/proc/self/mountinfo").value_or("").find(workspace_.path()), std::string::npos);
}

TEST_F(KernelEscape, ChrootIsDenied) {
  workspace_.Mkdir("jail");
  EXPECT_PROBE_BLOCKED(Probe("chroot", {workspace_ / "jail", "marker"}));
  EXPECT_FALSE(Exists(workspace_ / "jail/marker"));
}

TEST_F(KernelEscape, CodeExecutedFromAMemfdStaysConfined) {
  // Control: outside corral the probe does exec its memfd copy.
  Execute({ProbePath("memfd_exec"), outside_ / "bare-canary"});
  EXPECT_TRUE(Exists(outside_ / "bare-canary"));
  // Not a denial: inside, memfd_create and fexecve are allowed (Landlock does
  // not check execute on a memfd), which gives no more than a binary written
  // to the private /tmp or $HOME. What the exec'd copy can do is confined.
  Outcome outcome = Probe("memfd_exec", {outside_ / "canary", "/usr/corral-memfd-canary"});
  EXPECT_PROBE_BLOCKED(outcome);
  EXPECT_FALSE(Exists(outside_ / "canary"));
  EXPECT_FALSE(Exists("/usr/corral-memfd-canary"));
  ::unlink("/usr/corral-memfd-canary");
}

TEST_F(KernelEscape, X32SyscallKillsTheProcess) { ExpectKilledBySigsys(Probe("x32", {})); }
TEST_F(KernelEscape, Int80SyscallKillsTheProcess) { ExpectKilledBySigsys(Probe("int80", {})); }

}  // namespace
}  // namespace corral_it
