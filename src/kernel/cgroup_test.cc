// cgroup v2: the offer read from fake trees (every shape of host), the run
// cgroup's failure path on a fake tree, and its whole life on this host's
// real v2 hierarchy (as root: made, a process put in, killed and removed;
// unprivileged: refused, as the hierarchy's root is not the user's).
#include "kernel/cgroup.h"

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <thread>
#include <sstream>

#include "testing/test_scratch_dir.h"

namespace corral {
namespace {

using ::corral::testing::TestTree;

void Write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(CgroupMountPoint, FindsTheCgroup2Mount) {
  const std::string mountinfo =
      "25 30 0:23 / /sys/fs/cgroup rw,nosuid - tmpfs tmpfs ro,mode=755\n"
      "26 25 0:24 / /sys/fs/cgroup/unified rw,nosuid,nodev shared:5 - cgroup2 cgroup2 rw,nsdelegate\n"
      "27 25 0:25 / /sys/fs/cgroup/pids rw shared:6 - cgroup cgroup rw,pids\n";
  EXPECT_EQ(CgroupMountPoint(mountinfo), "/sys/fs/cgroup/unified");
  EXPECT_EQ(CgroupMountPoint("27 25 0:25 / /sys/fs/cgroup/pids rw - cgroup cgroup rw,pids\n"), "");
}

// At the hierarchy's root (root's usual cgroup): what cgroup.controllers
// lists, enabled by corral in subtree_control.
TEST(CgroupOffer, TheRootCgroupOffersItsControllers) {
  TestTree tree;
  Write(tree.Join("cgroup.controllers"), "cpuset cpu io memory pids\n");
  CgroupOffer offer = ProbeCgroupOffer(tree.path(), "0::/\n");
  EXPECT_TRUE(offer.pids);
  EXPECT_TRUE(offer.memory);
  EXPECT_TRUE(offer.enable);
  EXPECT_EQ(offer.parent, tree.path());
}

// A delegated subtree: what its subtree_control gives children, not merely
// what it has.
TEST(CgroupOffer, ADelegatedCgroupOffersWhatItsChildrenGet) {
  TestTree tree;
  const std::string own = tree.Dir("user.slice/user-1000.slice/corral.scope");
  Write(own + "/cgroup.controllers", "cpu memory pids\n");
  Write(own + "/cgroup.subtree_control", "pids\n");
  CgroupOffer offer =
      ProbeCgroupOffer(tree.path(), "12:pids:/x\n0::/user.slice/user-1000.slice/corral.scope\n");
  EXPECT_TRUE(offer.pids);
  EXPECT_FALSE(offer.memory);
  EXPECT_FALSE(offer.enable);
  EXPECT_EQ(offer.parent, own);
}

// The cpu controller alone is an offer too (for --max-cpus); "cpuset" is
// not "cpu".
TEST(CgroupOffer, TheCpuControllerIsOffered) {
  TestTree tree;
  const std::string own = tree.Dir("corral.slice");
  Write(own + "/cgroup.controllers", "cpuset cpu\n");
  Write(own + "/cgroup.subtree_control", "cpu\n");
  CgroupOffer offer = ProbeCgroupOffer(tree.path(), "0::/corral.slice\n");
  EXPECT_TRUE(offer.cpu);
  EXPECT_FALSE(offer.pids);
  EXPECT_EQ(offer.parent, own);
  EXPECT_NE(offer.detail.find("cpu.max"), std::string::npos) << offer.detail;
  Write(own + "/cgroup.subtree_control", "cpuset\n");
  EXPECT_FALSE(ProbeCgroupOffer(tree.path(), "0::/corral.slice\n").cpu);
}

// cpu.max is "QUOTA PERIOD" in microseconds, the period 100ms.
TEST(CgroupCpuMax, TheQuotaIsTheShareOfEachPeriod) {
  EXPECT_EQ(CpuMaxText(500), "50000 100000");
  EXPECT_EQ(CpuMaxText(2000), "200000 100000");
  EXPECT_EQ(CpuMaxText(10), "1000 100000");  // the kernel's smallest quota
  EXPECT_EQ(CpuMaxText(1250), "125000 100000");
}

// A hybrid host's v2 hierarchy with no controllers (this host's): nothing,
// and the detail says why.
TEST(CgroupOffer, AHierarchyWithoutControllersOffersNothing) {
  TestTree tree;
  Write(tree.Join("cgroup.controllers"), "\n");
  CgroupOffer offer = ProbeCgroupOffer(tree.path(), "4:memory:/x\n0::/\n");
  EXPECT_FALSE(offer.pids);
  EXPECT_FALSE(offer.memory);
  EXPECT_TRUE(offer.parent.empty());
  EXPECT_FALSE(offer.cpu);
  EXPECT_NE(offer.detail.find("none of the pids, memory and cpu controllers"), std::string::npos) << offer.detail;
  EXPECT_NE(offer.detail.find("bound to cgroup v1"), std::string::npos) << offer.detail;
}

TEST(CgroupOffer, NoHierarchyOrNoOwnCgroupOffersNothing) {
  EXPECT_EQ(ProbeCgroupOffer("", "0::/\n").detail, "no cgroup v2 hierarchy is mounted");
  TestTree tree;
  CgroupOffer offer = ProbeCgroupOffer(tree.path(), "4:memory:/x\n");
  EXPECT_FALSE(offer.pids);
  EXPECT_NE(offer.detail.find("not in it"), std::string::npos) << offer.detail;
  // A path that climbs out is not followed.
  EXPECT_FALSE(ProbeCgroupOffer(tree.path(), "0::/../../etc\n").pids);
}

// A limit the directory cannot take (a plain directory has no pids.max)
// fails naming the file, and leaves no cgroup behind.
TEST(RunCgroup, ALimitThatCannotBeSetFailsAndLeavesNothing) {
  TestTree tree;
  Result<RunCgroup> made =
      RunCgroup::Create(tree.path(), CgroupLimits{.pids_max = 11, .memory_max = {}, .cpu_milli = {}});
  ASSERT_FALSE(made.ok());
  EXPECT_NE(made.error().message().find("pids.max"), std::string::npos) << made.error().ToString();
  std::error_code ignored;
  EXPECT_TRUE(std::filesystem::is_empty(tree.path(), ignored)) << "a cgroup directory was left";
}

// Likewise cpu.max: the failure names it, and nothing is left.
TEST(RunCgroup, ACpuShareThatCannotBeSetFailsAndLeavesNothing) {
  TestTree tree;
  Result<RunCgroup> made =
      RunCgroup::Create(tree.path(), CgroupLimits{.pids_max = {}, .memory_max = {}, .cpu_milli = 500});
  ASSERT_FALSE(made.ok());
  EXPECT_NE(made.error().message().find("cpu.max"), std::string::npos) << made.error().ToString();
  std::error_code ignored;
  EXPECT_TRUE(std::filesystem::is_empty(tree.path(), ignored)) << "a cgroup directory was left";
}

// This host's real v2 hierarchy. As root: a run cgroup is made there, a
// process put in it is killed by Remove, and the cgroup is gone. As an
// unprivileged user the hierarchy's root is not writable, and the offer
// says so.
TEST(RunCgroup, OnTheRealHierarchy) {
  std::string mountinfo = Slurp("/proc/self/mountinfo");
  const std::string mount = CgroupMountPoint(mountinfo);
  ASSERT_FALSE(mount.empty()) << "no cgroup v2 hierarchy on this host";
  if (::geteuid() != 0) {
    Result<RunCgroup> refused = RunCgroup::Create(mount, CgroupLimits{});
    EXPECT_FALSE(refused.ok());
    EXPECT_FALSE(ProbeHostCgroupOffer().pids && ProbeHostCgroupOffer().parent == mount);
    return;
  }
  Result<RunCgroup> made = RunCgroup::Create(mount, CgroupLimits{});
  ASSERT_TRUE(made.ok()) << made.error().ToString();
  const std::string path = made->path();
  struct stat st;
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  pid_t child = ::fork();
  if (child == 0) {
    for (;;) ::pause();
  }
  Write(path + "/cgroup.procs", std::to_string(child) + "\n");
  EXPECT_NE(Slurp(path + "/cgroup.procs").find(std::to_string(child)), std::string::npos);
  // Remove waits for the cgroup to empty, and the child is reaped here.
  std::thread reaper([child] {
    int status = 0;
    ::waitpid(child, &status, 0);
  });
  Result<void> removed = made->Remove();
  reaper.join();
  EXPECT_TRUE(removed.ok()) << removed.error().ToString();
  EXPECT_NE(::stat(path.c_str(), &st), 0) << path << " is still there";
  EXPECT_NE(::kill(child, 0), 0) << "the process in the cgroup was not killed";
}

}  // namespace
}  // namespace corral
