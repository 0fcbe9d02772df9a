// Compile(Policy, HostSupport) with fake hosts: fail closed by default, say
// what was dropped under --best-effort, report every feature honestly; and
// BuildMountPlan's view of a policy.
#include "confine/plan.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <string_view>

#include "testing/test_scratch_dir.h"
#include "kernel/kernel_abi.h"
#include "kernel/seccomp.h"
#include "policy/tmpfs_size.h"

namespace corral {
namespace {

using ::corral::testing::TestTree;

HostSupport FullHost(int abi = 6) {
  HostSupport host;
  host.landlock_abi = abi;
  host.user_namespaces = true;
  host.seccomp = true;
  host.cgroup2 = true;
  host.kernel_release = "6.8.0-test";
  return host;
}

class PlanTest : public ::testing::Test {
 protected:
  PlanTest() : workspace_(tree_.Dir("ws")), home_(tree_.Dir("home")) {}

  PolicyBuilder Builder() const { return PolicyBuilder(HostContext{workspace_, home_, ::getuid(), ::getgid(), {}, {}, {}}); }
  // Builds into `policy_` (kept alive for the plan) and compiles.
  Result<Plan> CompileWith(const PolicyBuilder& builder, const HostSupport& host) {
    Result<Policy> built = builder.Build();
    EXPECT_TRUE(built.ok()) << built.error().ToString();
    if (!built.ok()) return std::move(built).error();
    policy_.emplace(std::move(built).value());
    return Compile(*policy_, host);
  }
  static std::map<std::string, FeatureStatus> Features(const Plan& plan) {
    std::map<std::string, FeatureStatus> features;
    for (const FeatureReport& feature : plan.report().features) {
      EXPECT_TRUE(features.emplace(feature.feature, feature.status).second) << "twice: " << feature.feature;
      EXPECT_FALSE(feature.detail.empty()) << feature.feature;
    }
    return features;
  }

  TestTree tree_;
  std::string workspace_;
  std::string home_;
  std::optional<Policy> policy_;
};

TEST_F(PlanTest, NoLandlockFailsClosedNamingTheWayOut) {
  Result<Plan> plan = CompileWith(Builder(), FullHost(0));
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.error().kind(), ErrorKind::kUnsupported);
  EXPECT_NE(plan.error().message().find("landlock"), std::string::npos) << plan.error().message();
  EXPECT_NE(plan.error().message().find("--best-effort"), std::string::npos) << plan.error().message();
  EXPECT_NE(plan.error().message().find("not run"), std::string::npos) << plan.error().message();
}

TEST_F(PlanTest, NoLandlockUnderBestEffortIsDegradedAndSaysSo) {
  Result<Plan> plan = CompileWith(Builder().SetEnforcement(Enforcement::kBestEffort), FullHost(0));
  ASSERT_TRUE(plan.ok()) << plan.error().ToString();
  EXPECT_EQ(plan->level(), Level::kDegraded);
  ASSERT_FALSE(plan->dropped().empty());
  EXPECT_NE(plan->dropped()[0].find("landlock"), std::string::npos);
  EXPECT_EQ(plan->mechanisms().landlock_abi, 0);
  EXPECT_EQ(Features(*plan)["landlock filesystem"], FeatureStatus::kUnavailable);
}

TEST_F(PlanTest, NoUserNamespacesFailsClosed) {
  HostSupport host = FullHost();
  host.user_namespaces = false;
  host.user_namespaces_detail = "kernel.unprivileged_userns_clone = 0";
  Result<Plan> plan = CompileWith(Builder(), host);
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.error().kind(), ErrorKind::kUnsupported);
  EXPECT_NE(plan.error().message().find("namespaces"), std::string::npos) << plan.error().message();
  EXPECT_NE(plan.error().message().find("unprivileged_userns_clone"), std::string::npos) << plan.error().message();
  EXPECT_NE(plan.error().message().find("--best-effort"), std::string::npos) << plan.error().message();
}

TEST_F(PlanTest, NoUserNamespacesUnderBestEffortIsDegraded) {
  HostSupport host = FullHost();
  host.user_namespaces = false;
  Result<Plan> plan = CompileWith(Builder().SetEnforcement(Enforcement::kBestEffort), host);
  ASSERT_TRUE(plan.ok()) << plan.error().ToString();
  EXPECT_EQ(plan->level(), Level::kDegraded);
  EXPECT_FALSE(plan->mechanisms().namespaces);
  ASSERT_FALSE(plan->dropped().empty());
  EXPECT_NE(plan->dropped()[0].find("namespaces"), std::string::npos);
  // Landlock has no right for chmod: without the read-only binds, the report says so.
  EXPECT_TRUE(std::any_of(plan->dropped().begin(), plan->dropped().end(), [](const std::string& line) {
    return line.starts_with("file metadata: ") && line.find("chmod") != std::string::npos;
  })) << ::testing::PrintToString(plan->dropped());
  EXPECT_FALSE(plan->provided().Has(Guarantee::kProcessBoundary));
  EXPECT_EQ(Features(*plan)["pid namespace"], FeatureStatus::kUnavailable);
  EXPECT_EQ(Features(*plan)["protected paths"], FeatureStatus::kNarrowed);
}

// Without a mount view a mask hides nothing: with Landlock the rules leave
// the masked paths out (the directory holding one is granted entry by entry);
// without Landlock as well, a mask the caller can read refuses the run, even
// under --best-effort.
TEST_F(PlanTest, NoUserNamespacesNorLandlockRefusesAReadableMask) {
  std::string key = tree_.File("home/.ssh/id_ed25519", "key");
  std::string notes = tree_.File("home/notes.txt", "notes");
  HostSupport host = FullHost();
  host.user_namespaces = false;
  Result<Plan> plan =
      CompileWith(Builder().AllowRead(home_).SetEnforcement(Enforcement::kBestEffort), host);
  ASSERT_TRUE(plan.ok()) << plan.error().ToString();
  bool notes_granted = false;
  for (const MountOp& op : plan->mounts().ops) {
    if (op.kind != MountKind::kBind || op.source == nullptr) continue;
    EXPECT_NE(std::string(op.source), home_) << "the home holds a mask: no rule on it whole";
    EXPECT_NE(std::string(op.source), home_ + "/.ssh");
    EXPECT_NE(std::string(op.source), key);
    if (std::string(op.source) == notes) {
      notes_granted = true;
      EXPECT_TRUE(op.Has(MountFlag::kPinned));
      EXPECT_EQ(op.landlock & ~kabi::kFsFileRights, 0u) << "a file's rule carries file rights only";
    }
  }
  EXPECT_TRUE(notes_granted);
  bool said = false;
  for (const std::string& line : plan->dropped()) said = said || line.find("entry by entry") != std::string::npos;
  EXPECT_TRUE(said);

  host.landlock_abi = 0;
  Result<Plan> refused =
      CompileWith(Builder().AllowRead(home_).SetEnforcement(Enforcement::kBestEffort), host);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().kind(), ErrorKind::kUnsupported);
  EXPECT_NE(refused.error().message().find(home_ + "/.ssh"), std::string::npos) << refused.error().message();
  EXPECT_NE(refused.error().message().find("--best-effort cannot drop an instruction to hide"), std::string::npos)
      << refused.error().message();
}

TEST_F(PlanTest, NoSeccompFailsClosedOrIsDropped) {
  HostSupport host = FullHost();
  host.seccomp = false;
  Result<Plan> refused = CompileWith(Builder(), host);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message().find("seccomp"), std::string::npos);
  Result<Plan> plan = CompileWith(Builder().SetEnforcement(Enforcement::kBestEffort), host);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->level(), Level::kDegraded);
  EXPECT_FALSE(plan->provided().Has(Guarantee::kSyscallFilter));
  EXPECT_EQ(Features(*plan)["seccomp filter"], FeatureStatus::kUnavailable);
}

TEST_F(PlanTest, FullHostGivesEveryGuarantee) {
  Result<Plan> plan = CompileWith(Builder(), FullHost());
  ASSERT_TRUE(plan.ok()) << plan.error().ToString();
  EXPECT_EQ(plan->level(), Level::kFull);
  EXPECT_TRUE(plan->dropped().empty());
  EXPECT_EQ(plan->required().Names().size(), 9u);
  EXPECT_TRUE(plan->provided().Covers(plan->required()));
  EXPECT_TRUE(plan->required().Has(Guarantee::kNetworkBoundary));
  EXPECT_EQ(plan->mechanisms().landlock_abi, 6);
  EXPECT_TRUE(plan->mechanisms().namespaces);
  EXPECT_TRUE(plan->mechanisms().seccomp);
  EXPECT_EQ(plan->landlock().abi, 6);
  // The sandbox's own empty network namespace is the boundary: its lo comes
  // up, INET stream and datagram sockets are allowed, Landlock leaves TCP.
  EXPECT_EQ(plan->landlock().net, 0u) << "with a network namespace of its own, TCP is left to it";
  EXPECT_NE(plan->clone_flags() & CLONE_NEWNET, 0u);
  EXPECT_EQ(plan->loopback(), Loopback::kBringUp);
  EXPECT_EQ(plan->seccomp_filter().data(), EmbeddedSeccompFilter(SeccompOptions{InetSockets::kStreamAndDatagram}).data());
}

// The rung without namespaces (--best-effort on a host without user
// namespaces) has no network namespace: INET sockets stay refused by the
// filter and Landlock denies TCP, and no lo is touched.
TEST_F(PlanTest, WithoutANetworkNamespaceInetSocketsStayDenied) {
  HostSupport host = FullHost();
  host.user_namespaces = false;
  Result<Plan> plan = CompileWith(Builder().SetEnforcement(Enforcement::kBestEffort), host);
  ASSERT_TRUE(plan.ok()) << plan.error().ToString();
  EXPECT_EQ(plan->clone_flags(), 0u);
  EXPECT_EQ(plan->loopback(), Loopback::kLeave);
  EXPECT_NE(plan->landlock().net, 0u) << "without a network namespace, TCP is handled";
  // No mount view hides the host's unix sockets: only socketpair(2) pairs.
  EXPECT_EQ(plan->seccomp_filter().data(),
            EmbeddedSeccompFilter(SeccompOptions{InetSockets::kNone, UnixSockets::kPairsOnly}).data());
  EXPECT_TRUE(plan->provided().Has(Guarantee::kNetworkBoundary));
  EXPECT_EQ(Features(*plan)["landlock network"], FeatureStatus::kEnforced);
}

// Each plan names its rungs, lowest first: the full host, an older
// Landlock, none, and no user namespaces on top of an older Landlock.
TEST_F(PlanTest, EachPlanNamesItsRungs) {
  struct Row {
    int abi;
    bool user_namespaces;
    std::string rungs;
  };
  for (const Row& row : {Row{7, true, "full"}, Row{6, true, "full"}, Row{5, true, "landlock-4-5"},
                         Row{4, true, "landlock-4-5"}, Row{3, true, "landlock-1-3"}, Row{1, true, "landlock-1-3"},
                         Row{0, true, "no-landlock"}, Row{2, false, "no-userns + landlock-1-3"},
                         Row{6, false, "no-userns"}}) {
    HostSupport host = FullHost();
    host.landlock_abi = row.abi;
    host.user_namespaces = row.user_namespaces;
    Result<Plan> plan = CompileWith(Builder().SetEnforcement(Enforcement::kBestEffort), host);
    ASSERT_TRUE(plan.ok()) << plan.error().ToString();
    EXPECT_EQ(RungsText(plan->rungs()), row.rungs) << "ABI " << row.abi << " userns " << row.user_namespaces;
  }
}

// Refusals name the rung --best-effort would give, and the host's fix.
TEST_F(PlanTest, RefusalsNameTheRungAndTheFix) {
  HostSupport apparmor = FullHost();
  apparmor.user_namespaces = false;
  apparmor.apparmor_restricts_userns = true;
  Result<Plan> refused = CompileWith(Builder(), apparmor);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message().find("sudo corral setup apparmor --install"), std::string::npos)
      << refused.error().message();
  EXPECT_NE(refused.error().message().find("(rung no-userns, see docs/hosts.md)"), std::string::npos)
      << refused.error().message();
  HostSupport container = FullHost();
  container.user_namespaces = false;
  container.container = "docker";
  refused = CompileWith(Builder(), container);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message().find("hostUsers: false"), std::string::npos) << refused.error().message();
}

// Without a mount view, --allow-unix cannot show one socket and hide the
// rest: refused even under --best-effort.
TEST_F(PlanTest, AllowUnixWithoutNamespacesIsRefused) {
  HostSupport host = FullHost();
  host.user_namespaces = false;
  std::string socket_path = tree_.Dir("sockets") + "/agent.sock";
  int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::snprintf(address.sun_path, sizeof address.sun_path, "%s", socket_path.c_str());
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  Result<Plan> plan =
      CompileWith(Builder().SetEnforcement(Enforcement::kBestEffort).AllowUnix(socket_path), host);
  ::close(fd);
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(plan.error().message().find("--allow-unix needs the mount view"), std::string::npos)
      << plan.error().message();
}

TEST_F(PlanTest, NetworkAllRequiresNoNetworkBoundary) {
  Result<Plan> plan = CompileWith(Builder().Network(NetworkMode::kAll), FullHost());
  ASSERT_TRUE(plan.ok()) << plan.error().ToString();
  EXPECT_FALSE(plan->required().Has(Guarantee::kNetworkBoundary));
  EXPECT_FALSE(plan->provided().Has(Guarantee::kNetworkBoundary));
  EXPECT_EQ(plan->level(), Level::kFull);
  EXPECT_EQ(plan->landlock().net, 0u);
  std::map<std::string, FeatureStatus> features = Features(*plan);
  EXPECT_EQ(features.count("landlock network"), 0u);
  EXPECT_EQ(plan->loopback(), Loopback::kLeave);
  EXPECT_EQ(plan->seccomp_filter().data(), EmbeddedSeccompFilter(SeccompOptions{InetSockets::kStreamAndDatagram}).data());
}

// --allow-port: the host's network, seccomp's TCP-only filter, and
// Landlock handling TCP with one connect rule per port; refused below ABI 4
// unless best effort, which says every TCP port is open.
TEST_F(PlanTest, AllowPortSharesTheHostsNetworkWithLandlockNamingThePorts) {
  Result<Plan> plan = CompileWith(Builder().AllowPort("443").AllowPort("22"), FullHost());
  ASSERT_TRUE(plan.ok()) << plan.error().ToString();
  EXPECT_EQ(plan->clone_flags() & CLONE_NEWNET, 0u) << "the host's network namespace";
  EXPECT_EQ(plan->loopback(), Loopback::kLeave);
  EXPECT_FALSE(plan->services().Forwards());
  EXPECT_NE(plan->landlock().net, 0u);
  ASSERT_EQ(plan->landlock().connect_port_count, 2);
  EXPECT_EQ(plan->landlock().connect_ports[0], 443);
  EXPECT_EQ(plan->landlock().connect_ports[1], 22);
  EXPECT_EQ(plan->seccomp_filter().data(), EmbeddedSeccompFilter(SeccompOptions{InetSockets::kTcpOnly}).data());
  EXPECT_TRUE(plan->provided().Has(Guarantee::kNetworkBoundary));
  EXPECT_EQ(Features(*plan)["landlock network"], FeatureStatus::kEnforced);
  bool hosts = false;
  for (const MountOp& op : plan->mounts().ops) {
    hosts = hosts || (op.kind == MountKind::kFileOver && std::string_view(op.target) == "/etc/hosts");
    EXPECT_NE(std::string_view(op.target), "/etc/resolv.conf") << "the host's resolv.conf stays";
  }
  EXPECT_TRUE(hosts) << "the view's /etc/hosts holds the allowed names alone";

  HostSupport old = FullHost();
  old.landlock_abi = 3;
  Result<Plan> refused = CompileWith(Builder().AllowPort("443"), old);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().kind(), ErrorKind::kUnsupported);
  EXPECT_NE(refused.error().message().find("--allow-port needs Landlock's TCP rules (ABI 4"), std::string::npos)
      << refused.error().message();
  Result<Plan> degraded = CompileWith(Builder().AllowPort("443").SetEnforcement(Enforcement::kBestEffort), old);
  ASSERT_TRUE(degraded.ok()) << degraded.error().ToString();
  EXPECT_EQ(degraded->landlock().net, 0u);
  EXPECT_FALSE(degraded->provided().Has(Guarantee::kNetworkBoundary));
  ASSERT_FALSE(degraded->dropped().empty());
  EXPECT_NE(degraded->dropped().front().find("every TCP port of every host is open"), std::string::npos);
}

// Without namespaces there is no view to hold the sandbox's /etc/hosts: the
// host's /etc/hosts and resolver answer, and the degraded run says so.
TEST_F(PlanTest, AllowDnsWithoutNamespacesSaysEveryNameResolves) {
  HostSupport host = FullHost();
  host.user_namespaces = false;
  Result<Plan> plan =
      CompileWith(Builder().AllowPort("443").SetEnforcement(Enforcement::kBestEffort), host);
  ASSERT_TRUE(plan.ok()) << plan.error().ToString();
  for (const MountOp& op : plan->mounts().ops) {
    // /etc's own entries may be Landlock rules (a mask lies there), never a file over one.
    EXPECT_NE(op.kind, MountKind::kFileOver) << op.target;
  }
  bool said = false;
  for (const std::string& line : plan->dropped()) said = said || line.find("--allow-dns") != std::string::npos;
  EXPECT_TRUE(said) << "the degraded run does not say the host's names resolve";
}

TEST_F(PlanTest, ReportHasAnEntryPerFeatureWithAbiDependentStatus) {
  const char* always[] = {"user namespace",  "mount view",     "pid namespace", "ipc namespace",
                          "uts namespace",   "network namespace", "landlock filesystem", "landlock ioctl",
                          "landlock scopes", "seccomp filter", "capabilities",
                          "environment",     "protected paths", "resource limits"};
  struct Row {
    int abi;
    FeatureStatus filesystem, ioctl, scopes;
  };
  const auto E = FeatureStatus::kEnforced, N = FeatureStatus::kNarrowed;
  for (const Row& row : {Row{1, N, N, N}, Row{2, N, N, N}, Row{3, E, N, N}, Row{4, E, N, N},
                         Row{5, E, E, N}, Row{6, E, E, E}}) {
    Result<Plan> plan = CompileWith(Builder(), FullHost(row.abi));
    ASSERT_TRUE(plan.ok()) << "abi " << row.abi << ": " << plan.error().ToString();
    std::map<std::string, FeatureStatus> features = Features(*plan);
    for (const char* name : always) EXPECT_EQ(features.count(name), 1u) << name << " at abi " << row.abi;
    EXPECT_EQ(features["landlock filesystem"], row.filesystem) << "abi " << row.abi;
    EXPECT_EQ(features["landlock ioctl"], row.ioctl) << "abi " << row.abi;
    // The sandbox's own network namespace bounds the network: Landlock's TCP
    // rights are not used, and the report has no row for them.
    EXPECT_EQ(features.count("landlock network"), 0u) << "abi " << row.abi;
    EXPECT_EQ(features["landlock scopes"], row.scopes) << "abi " << row.abi;
    EXPECT_EQ(features["seccomp filter"], FeatureStatus::kEnforced);
    EXPECT_EQ(plan->level(), Level::kFull) << "abi " << row.abi;
  }
}

TEST_F(PlanTest, MountPlanHoldsGrantsMasksAndTheFreshTrees) {
  std::string data = tree_.Dir("data");
  std::string out = tree_.Dir("data/out");
  Result<Plan> plan = CompileWith(Builder().AllowRead(data).AllowWrite(out), FullHost());
  ASSERT_TRUE(plan.ok()) << plan.error().ToString();
  const std::vector<MountOp>& ops = plan->mounts().ops;
  EXPECT_TRUE(std::is_sorted(ops.begin(), ops.end(), [](const MountOp& a, const MountOp& b) {
    return std::string_view(a.target) < std::string_view(b.target);
  }));
  std::map<std::string, const MountOp*> by_target;
  for (const MountOp& op : ops) by_target.emplace(op.target, &op);
  auto op = [&](const std::string& target) -> const MountOp* {
    auto it = by_target.find(target);
    return it == by_target.end() ? nullptr : it->second;
  };

  ASSERT_NE(op("/proc"), nullptr);
  EXPECT_EQ(op("/proc")->kind, MountKind::kProc);
  ASSERT_NE(op("/dev"), nullptr);
  EXPECT_EQ(op("/dev")->kind, MountKind::kTmpfs);
  ASSERT_NE(op("/dev/null"), nullptr);
  EXPECT_TRUE(op("/dev/null")->Has(MountFlag::kDevices));
  ASSERT_NE(op("/tmp"), nullptr);
  EXPECT_EQ(op("/tmp")->kind, MountKind::kTmpfs);
  ASSERT_NE(op(home_), nullptr);
  EXPECT_EQ(op(home_)->kind, MountKind::kTmpfs);
  // Each private tmpfs is capped (the default: 1g, 131072 inodes; /dev/shm a quarter).
  EXPECT_STREQ(op(home_)->options, "mode=0700,size=1073741824,nr_inodes=131072");
  EXPECT_STREQ(op("/tmp")->options, "mode=1777,size=1073741824,nr_inodes=131072");
  ASSERT_NE(op("/dev/shm"), nullptr);
  EXPECT_STREQ(op("/dev/shm")->options, "mode=1777,size=268435456,nr_inodes=32768");

  struct Grant {
    std::string path;
    bool read_only;
  };
  for (const Grant& grant : {Grant{workspace_, false}, Grant{data, true}, Grant{out, false}, Grant{"/usr", true},
                             Grant{"/etc", true}}) {
    const MountOp* bind = op(grant.path);
    ASSERT_NE(bind, nullptr) << grant.path;
    EXPECT_EQ(bind->kind, MountKind::kBind) << grant.path;
    EXPECT_EQ(bind->Has(MountFlag::kReadOnly), grant.read_only) << grant.path;
    EXPECT_TRUE(bind->Has(MountFlag::kPinned)) << grant.path;
    EXPECT_NE(bind->landlock, 0u) << grant.path;
  }
  for (const MaskedPath& mask : policy_->masks()) {
    ASSERT_NE(op(mask.path), nullptr) << mask.path;
    EXPECT_EQ(op(mask.path)->kind, MountKind::kMask) << mask.path;
  }
  struct stat st;
  // Root's /etc is an idmapped tree the plan made (confine/etc_view.h),
  // with /etc's root-only files masked one by one where it cannot be.
  if (::geteuid() == 0) {
    ASSERT_NE(op("/etc"), nullptr);
    EXPECT_TRUE(op("/etc")->Has(MountFlag::kPrepared)) << "this host's /etc can be idmapped";
    EXPECT_GE(op("/etc")->fd, 0);
  } else if (::lstat("/etc/shadow", &st) == 0 && ::access("/etc/shadow", R_OK) == 0) {
    ASSERT_NE(op("/etc/shadow"), nullptr);
    EXPECT_EQ(op("/etc/shadow")->kind, MountKind::kMask);
  }
  if (::lstat("/bin", &st) == 0 && S_ISLNK(st.st_mode)) {
    ASSERT_NE(op("/bin"), nullptr);
    EXPECT_EQ(op("/bin")->kind, MountKind::kSymlink);
  }
}

// Exec's two layers in the plan: a bind without exec is noexec, and the
// private $HOME above such a grant carries no Landlock exec right.
TEST_F(PlanTest, GrantsWithoutExecAreNoexecAndTheirPrivateTreeLosesExec) {
  std::string data = tree_.Dir("home/data");
  std::string tools = tree_.Dir("tools");
  Result<Plan> plan = CompileWith(Builder().AllowRead(data).AllowExec(tools), FullHost());
  ASSERT_TRUE(plan.ok()) << plan.error().ToString();
  std::map<std::string, const MountOp*> by_target;
  for (const MountOp& op : plan->mounts().ops) by_target.emplace(op.target, &op);
  ASSERT_TRUE(by_target.count(data) && by_target.count(tools) && by_target.count(home_) && by_target.count("/tmp"));
  EXPECT_TRUE(by_target[data]->Has(MountFlag::kNoexec));
  EXPECT_FALSE(by_target[tools]->Has(MountFlag::kNoexec));
  EXPECT_FALSE(by_target[workspace_]->Has(MountFlag::kNoexec));
  EXPECT_FALSE(by_target["/usr"]->Has(MountFlag::kNoexec));
  EXPECT_TRUE(by_target["/etc"]->Has(MountFlag::kNoexec));
  EXPECT_EQ(by_target[home_]->landlock & kabi::kFsExecute, 0u) << "the home above a read grant";
  EXPECT_NE(by_target[home_]->landlock & kabi::kFsWriteFile, 0u);
  // (The test tree may itself lie under /tmp, with the read grant.)
  bool data_under_tmp = IsWithin(data, "/tmp");
  EXPECT_EQ((by_target["/tmp"]->landlock & kabi::kFsExecute) == 0, data_under_tmp);
}

TEST_F(PlanTest, MountPlanBindsProtectedPathsReadOnly) {
  tree_.Dir("ws/.git/hooks");
  Result<Plan> plan = CompileWith(Builder(), FullHost());
  ASSERT_TRUE(plan.ok()) << plan.error().ToString();
  const MountOp* hooks = nullptr;
  const MountOp* dotgit = nullptr;
  for (const MountOp& op : plan->mounts().ops) {
    if (workspace_ + "/.git/hooks" == op.target) hooks = &op;
    if (workspace_ + "/.git" == op.target) dotgit = &op;
  }
  ASSERT_NE(hooks, nullptr);
  EXPECT_TRUE(hooks->Has(MountFlag::kReadOnly));
  ASSERT_NE(dotgit, nullptr) << ".git is an anchor, bound over itself";
  EXPECT_FALSE(dotgit->Has(MountFlag::kReadOnly));
}

// A forbid_read mask carries the (dev, inode) the walk saw, so the child
// mounts it on that file or refuses; nothing is mounted inside a hidden
// directory (the protected files of a hidden .git).
TEST_F(PlanTest, MountPlanPinsMasksAndMountsNothingInsideAHiddenDirectory) {
  tree_.File("ws/.env", "x");
  tree_.File("ws/.git/config", "x");
  tree_.Dir("ws/.git/hooks");
  Result<Plan> plan = CompileWith(Builder().ForbidRead(".env").ForbidRead(".git"), FullHost());
  ASSERT_TRUE(plan.ok()) << plan.error().ToString();
  const MountOp* env = nullptr;
  const MountOp* dotgit = nullptr;
  for (const MountOp& op : plan->mounts().ops) {
    EXPECT_FALSE(IsWithin(op.target, workspace_ + "/.git") && workspace_ + "/.git" != op.target) << op.target;
    if (workspace_ + "/.env" == op.target) env = &op;
    if (workspace_ + "/.git" == op.target) dotgit = &op;
  }
  struct stat st;
  ASSERT_EQ(::lstat((workspace_ + "/.env").c_str(), &st), 0);
  ASSERT_NE(env, nullptr);
  EXPECT_EQ(env->kind, MountKind::kMask);
  EXPECT_TRUE(env->Has(MountFlag::kPinned));
  EXPECT_EQ(env->pin, (FileIdentity{st.st_dev, st.st_ino}));
  ASSERT_NE(dotgit, nullptr);
  EXPECT_EQ(dotgit->kind, MountKind::kMask);
  EXPECT_TRUE(dotgit->Has(MountFlag::kDir));
}

// Where /etc cannot be idmapped, root's plan masks its root-only entries one
// by one: in a forked child's private mount namespace, /etc is a ramfs
// (which allows no idmapped mount) holding one 0600 file. The child's exit
// codes: 0 ok, 1 set-up failed, 2 the plan failed, 3 /etc was prepared
// anyway, 4 the file has no mask.
TEST_F(PlanTest, RootMasksEtcOneByOneWhereItCannotBeIdmapped) {
  if (::geteuid() != 0) {
    // A non-root plan never idmaps /etc.
    Result<Plan> plan = CompileWith(Builder(), FullHost());
    ASSERT_TRUE(plan.ok()) << plan.error().ToString();
    for (const MountOp& op : plan->mounts().ops) EXPECT_FALSE(op.Has(MountFlag::kPrepared)) << op.target;
    return;
  }
  auto child = [&]() -> int {
    if (::unshare(CLONE_NEWNS) != 0 || ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
        ::mount("ramfs", "/etc", "ramfs", 0, "mode=0755") != 0) {
      return 1;
    }
    int fd = ::open("/etc/corral-root-only", O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
    if (fd < 0) return 1;
    ::close(fd);
    Result<Plan> plan = CompileWith(Builder(), FullHost());
    if (!plan.ok()) return 2;
    int code = 4;
    for (const MountOp& op : plan->mounts().ops) {
      if (std::string_view(op.target) == "/etc" && op.Has(MountFlag::kPrepared)) return 3;
      if (std::string_view(op.target) == "/etc/corral-root-only" && op.kind == MountKind::kMask) code = 0;
    }
    return code;
  };
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) ::_exit(child());
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "see the child's exit codes above";
}

}  // namespace
}  // namespace corral


namespace corral {
namespace {

// Plan::Fingerprint, which a warm sandbox (exec/warm_sandbox.h) compares:
// the same policy compiled twice, or for another working directory inside
// it, gives the same; another network or another grant does not.
TEST_F(PlanTest, TheFingerprintIsTheSandboxNotTheWorkingDirectory) {
  auto fingerprint = [this](const PolicyBuilder& builder) {
    Result<Plan> plan = CompileWith(builder, FullHost());
    EXPECT_TRUE(plan.ok()) << plan.error().ToString();
    return plan.ok() ? std::make_pair(plan->Fingerprint(), plan->cwd()) : std::make_pair(std::string(), std::string());
  };
  auto first = fingerprint(Builder());
  EXPECT_EQ(first.first.size(), 64u);
  EXPECT_EQ(fingerprint(Builder()).first, first.first);
  std::string sub = tree_.Dir("ws/sub");
  auto inside = fingerprint(
      PolicyBuilder(HostContext{sub, home_, ::getuid(), ::getgid(), {}, {}, {}}).Workspace(workspace_));
  EXPECT_NE(inside.second, first.second);
  EXPECT_EQ(inside.first, first.first);
  EXPECT_NE(fingerprint(Builder().Network(NetworkMode::kAll)).first, first.first);
  EXPECT_NE(fingerprint(Builder().AllowRead(tree_.Dir("data"))).first, first.first);
}

// The resource limits: an rlimit each, and the cgroup where the host offers
// one; as root a process limit needs the pids controller.
class PlanLimitsTest : public PlanTest {
 protected:
  PolicyBuilder BuilderAs(uid_t uid) const {
    return PolicyBuilder(HostContext{workspace_, home_, uid, ::getgid(), {}, {}, {}});
  }
  static const FeatureReport* Limits(const Plan& plan) {
    for (const FeatureReport& feature : plan.report().features) {
      if (feature.feature == "limits") return &feature;
    }
    return nullptr;
  }
  static std::map<int, std::pair<rlim_t, rlim_t>> Rlimits(const Plan& plan) {
    std::map<int, std::pair<rlim_t, rlim_t>> out;
    for (size_t i = 0; i < plan.rlimits().count; ++i) {
      out[plan.rlimits().entries[i].resource] = {plan.rlimits().entries[i].soft, plan.rlimits().entries[i].hard};
    }
    return out;
  }
};

TEST_F(PlanLimitsTest, EachLimitIsAnRlimitOfTheCommand) {
  PolicyBuilder builder = BuilderAs(1000);
  builder.MaxProcs(10).MaxMemory(64 * kMiB).MaxCpuSeconds(std::chrono::seconds(5)).MaxFileSize(kMiB).MaxOpenFiles(32);
  Result<Plan> plan = CompileWith(builder, FullHost());
  ASSERT_TRUE(plan.ok()) << plan.error().ToString();
  std::map<int, std::pair<rlim_t, rlim_t>> want = {{RLIMIT_NPROC, {11, 11}},  // the command's 10 and init
                                                   {RLIMIT_AS, {64 * kMiB, 64 * kMiB}},
                                                   {RLIMIT_CPU, {5, 6}},  // SIGXCPU, then SIGKILL a second later
                                                   {RLIMIT_FSIZE, {kMiB, kMiB}},
                                                   {RLIMIT_NOFILE, {32, 32}}};
  EXPECT_EQ(Rlimits(*plan), want);
  EXPECT_FALSE(plan->cgroup().wanted());  // the host offers no cgroup
  ASSERT_NE(Limits(*plan), nullptr);
  // Memory without a cgroup is per process only, and the report says so.
  EXPECT_EQ(Limits(*plan)->status, FeatureStatus::kNarrowed);
  EXPECT_NE(Limits(*plan)->detail.find("each process's address space only"), std::string::npos)
      << Limits(*plan)->detail;
  EXPECT_EQ(plan->level(), Level::kFull);
}

TEST_F(PlanLimitsTest, NoLimitsNoRlimitsAndTheReportSaysWhatTheHostGives) {
  HostSupport host = FullHost();
  host.cgroup_offer.detail = "no cgroup v2 hierarchy is mounted";
  Result<Plan> plan = CompileWith(BuilderAs(1000), host);
  ASSERT_TRUE(plan.ok()) << plan.error().ToString();
  EXPECT_TRUE(plan->rlimits().empty());
  ASSERT_NE(Limits(*plan), nullptr);
  EXPECT_EQ(Limits(*plan)->detail, "none asked; the host gives rlimits, and no cgroup v2 hierarchy is mounted");
}

// Global root is exempt from RLIMIT_NPROC: without a pids controller
// nothing holds --max-procs, so the plan refuses, naming why and the fix.
TEST_F(PlanLimitsTest, AProcessLimitAsRootWithoutAPidsControllerIsRefused) {
  HostSupport host = FullHost();
  host.cgroup_offer.detail = "cgroup v2 at /sys/fs/cgroup/unified offers none of the pids, memory and cpu controllers";
  PolicyBuilder builder = BuilderAs(0);
  builder.MaxProcs(10);
  Result<Plan> plan = CompileWith(builder, host);
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.error().kind(), ErrorKind::kUnsupported);
  EXPECT_NE(plan.error().message().find("process limit: --max-procs as root needs the pids controller"),
            std::string::npos)
      << plan.error().message();
  EXPECT_NE(plan.error().message().find("offers none of the pids"), std::string::npos) << plan.error().message();
  EXPECT_NE(plan.error().message().find("--best-effort"), std::string::npos) << plan.error().message();

  // Under --best-effort it runs without the limit, and says so.
  builder.SetEnforcement(Enforcement::kBestEffort);
  Result<Plan> degraded = CompileWith(builder, host);
  ASSERT_TRUE(degraded.ok()) << degraded.error().ToString();
  EXPECT_EQ(degraded->level(), Level::kDegraded);
  ASSERT_FALSE(degraded->dropped().empty());
  EXPECT_EQ(degraded->dropped().back().rfind("process limit: ", 0), 0u) << degraded->dropped().back();
  EXPECT_EQ(Rlimits(*degraded).count(RLIMIT_NPROC), 0u);  // nothing pretends to hold it
}

// The CPU share has no rlimit: without a cpu controller it is refused, as
// root or not, naming why and --best-effort; under --best-effort it is
// dropped and said, and nothing pretends to hold it.
TEST_F(PlanLimitsTest, ACpuShareWithoutACpuControllerIsRefused) {
  HostSupport host = FullHost();
  host.cgroup_offer = CgroupOffer{.parent = "/sys/fs/cgroup/corral.slice", .pids = true, .memory = true,
                                  .cpu = false, .enable = false, .detail = "corral's cgroup offers pids memory"};
  for (uid_t uid : {uid_t{0}, uid_t{1000}}) {
    PolicyBuilder builder = BuilderAs(uid);
    builder.MaxCpus(500);
    Result<Plan> plan = CompileWith(builder, host);
    ASSERT_FALSE(plan.ok()) << uid;
    EXPECT_EQ(plan.error().kind(), ErrorKind::kUnsupported);
    EXPECT_NE(plan.error().message().find("CPU share limit: --max-cpus needs the cpu controller of a cgroup"),
              std::string::npos)
        << plan.error().message();
    EXPECT_NE(plan.error().message().find("corral's cgroup offers pids memory"), std::string::npos)
        << plan.error().message();
    EXPECT_NE(plan.error().message().find("--best-effort"), std::string::npos) << plan.error().message();

    builder.SetEnforcement(Enforcement::kBestEffort);
    Result<Plan> degraded = CompileWith(builder, host);
    ASSERT_TRUE(degraded.ok()) << degraded.error().ToString();
    EXPECT_EQ(degraded->level(), Level::kDegraded);
    ASSERT_FALSE(degraded->dropped().empty());
    EXPECT_EQ(degraded->dropped().back().rfind("CPU share limit: ", 0), 0u) << degraded->dropped().back();
    EXPECT_FALSE(degraded->cgroup().limits.cpu_milli.has_value());
    EXPECT_FALSE(degraded->cgroup().wanted());
    ASSERT_NE(Limits(*degraded), nullptr);
    EXPECT_EQ(Limits(*degraded)->status, FeatureStatus::kNarrowed);
    EXPECT_NE(Limits(*degraded)->detail.find("CPUs: not limited"), std::string::npos) << Limits(*degraded)->detail;
  }
}

// With the cpu controller offered the share is cpu.max of the run's cgroup.
TEST_F(PlanLimitsTest, WithACpuControllerTheShareIsCpuMax) {
  HostSupport host = FullHost();
  host.cgroup_offer = CgroupOffer{.parent = "/sys/fs/cgroup", .pids = false, .memory = false, .cpu = true,
                                  .enable = true, .detail = "offered"};
  PolicyBuilder builder = BuilderAs(1000);
  builder.MaxCpus(1500);
  Result<Plan> plan = CompileWith(builder, host);
  ASSERT_TRUE(plan.ok()) << plan.error().ToString();
  ASSERT_TRUE(plan->cgroup().wanted());
  EXPECT_EQ(plan->cgroup().parent, "/sys/fs/cgroup");
  EXPECT_TRUE(plan->cgroup().enable);
  EXPECT_EQ(plan->cgroup().limits.cpu_milli, std::optional<uint64_t>(1500));
  EXPECT_TRUE(plan->rlimits().empty());
  EXPECT_EQ(Limits(*plan)->status, FeatureStatus::kEnforced);
  EXPECT_NE(Limits(*plan)->detail.find("1.5 CPUs for the whole sandbox (cpu.max 150000 100000"), std::string::npos)
      << Limits(*plan)->detail;
  EXPECT_EQ(plan->level(), Level::kFull);
}

// Where the host offers a cgroup, processes and memory are limits of the
// whole sandbox too; as root the pids controller alone holds --max-procs.
TEST_F(PlanLimitsTest, WithACgroupOfferProcessesAndMemoryBoundTheWholeSandbox) {
  HostSupport host = FullHost();
  host.cgroup_offer = CgroupOffer{.parent = "/sys/fs/cgroup/corral.slice", .pids = true, .memory = true,
                                  .cpu = false, .enable = false, .detail = "offered"};
  PolicyBuilder builder = BuilderAs(0);
  builder.MaxProcs(10).MaxMemory(64 * kMiB);
  Result<Plan> plan = CompileWith(builder, host);
  ASSERT_TRUE(plan.ok()) << plan.error().ToString();
  ASSERT_TRUE(plan->cgroup().wanted());
  EXPECT_EQ(plan->cgroup().parent, "/sys/fs/cgroup/corral.slice");
  EXPECT_EQ(plan->cgroup().limits.pids_max, std::optional<uint64_t>(11));
  EXPECT_EQ(plan->cgroup().limits.memory_max, std::optional<uint64_t>(64 * kMiB));
  EXPECT_EQ(Rlimits(*plan).count(RLIMIT_NPROC), 0u);  // root: no use
  EXPECT_EQ(Limits(*plan)->status, FeatureStatus::kEnforced);
  EXPECT_EQ(plan->level(), Level::kFull);
}

// The limits are part of the sandbox a warm one is started for: another
// limit, or the cgroup, is another fingerprint.
TEST_F(PlanLimitsTest, TheLimitsArePartOfTheFingerprint) {
  auto fingerprint = [this](const PolicyBuilder& builder, const HostSupport& host) {
    Result<Plan> plan = CompileWith(builder, host);
    EXPECT_TRUE(plan.ok()) << plan.error().ToString();
    return plan.ok() ? plan->Fingerprint() : std::string();
  };
  const std::string none = fingerprint(BuilderAs(1000), FullHost());
  PolicyBuilder files = BuilderAs(1000);
  files.MaxOpenFiles(32);
  const std::string open_files = fingerprint(files, FullHost());
  EXPECT_NE(open_files, none);
  EXPECT_EQ(fingerprint(files, FullHost()), open_files);
  PolicyBuilder more = BuilderAs(1000);
  more.MaxOpenFiles(64);
  EXPECT_NE(fingerprint(more, FullHost()), open_files);
  PolicyBuilder size = BuilderAs(1000);
  size.MaxFileSize(kMiB);
  EXPECT_NE(fingerprint(size, FullHost()), none);
  EXPECT_NE(fingerprint(size, FullHost()), open_files);
  // The same memory limit, per process only or with the whole sandbox's cgroup.
  HostSupport offered = FullHost();
  offered.cgroup_offer = CgroupOffer{.parent = "/sys/fs/cgroup/corral.slice", .pids = true, .memory = true,
                                     .cpu = true, .enable = false, .detail = "offered"};
  PolicyBuilder memory = BuilderAs(1000);
  memory.MaxMemory(64 * kMiB);
  EXPECT_NE(fingerprint(memory, offered), fingerprint(memory, FullHost()));
  // A CPU share is the cgroup's alone: another share is another sandbox.
  PolicyBuilder half = BuilderAs(1000);
  half.MaxCpus(500);
  PolicyBuilder two = BuilderAs(1000);
  two.MaxCpus(2000);
  EXPECT_NE(fingerprint(half, offered), fingerprint(two, offered));
  EXPECT_NE(fingerprint(half, offered), fingerprint(BuilderAs(1000), offered));
}

}  // namespace
}  // namespace corral
