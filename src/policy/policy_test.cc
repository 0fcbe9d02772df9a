// PolicyBuilder on a temporary tree: the default policy, grant merging and
// ordering, the refusals of bad input, and the fingerprint.
#include "policy/policy.h"

#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <string>

#include "testing/test_scratch_dir.h"

namespace corral {
namespace {

using ::corral::testing::TestTree;
using namespace std::chrono_literals;

// Binds `name` to the built policy, or fails the test with the build error.
#define ASSERT_BUILT(name, builder_expr)                                                    \
  Result<Policy> name##_result = (builder_expr).Build();                                    \
  ASSERT_TRUE(name##_result.ok()) << name##_result.error().ToString();                      \
  const Policy& name = *name##_result

class PolicyTest : public ::testing::Test {
 protected:
  PolicyTest() : workspace_(tree_.Dir("ws")), home_(tree_.Dir("home")) {}

  HostContext Host() const { return HostContext{workspace_, home_, ::getuid(), ::getgid(), {}, {}, {}}; }
  PolicyBuilder Builder() const { return PolicyBuilder(Host()); }

  // The fingerprint, or the error when the build failed.
  static std::string Fingerprint(const PolicyBuilder& builder) {
    Result<Policy> policy = builder.Build();
    return policy.ok() ? policy->fingerprint() : "error: " + policy.error().ToString();
  }
  static std::string Refusal(const PolicyBuilder& builder) {
    Result<Policy> policy = builder.Build();
    return policy.ok() ? std::string("built") : policy.error().message();
  }
  static const PathGrant* Exact(const Policy& policy, const std::string& path) {
    for (const PathGrant& grant : policy.grants()) {
      if (grant.path.path == path) return &grant;
    }
    return nullptr;
  }
  static std::string AccessOf(const Policy& policy, const std::string& path) {
    const PathGrant* grant = Exact(policy, path);
    return grant == nullptr ? "(no grant)" : AccessString(grant->access);
  }

  TestTree tree_;
  std::string workspace_;
  std::string home_;
};

TEST_F(PolicyTest, DefaultPolicyGrantsWorkspaceSystemTreesAndEtc) {
  ASSERT_BUILT(policy, Builder());
  ASSERT_TRUE(policy.workspace().has_value());
  EXPECT_EQ(policy.workspace()->path, workspace_);
  EXPECT_EQ(AccessOf(policy, workspace_), "rwx");
  EXPECT_EQ(Exact(policy, workspace_)->origin, GrantOrigin::kWorkspace);
  EXPECT_EQ(AccessOf(policy, "/usr"), "rx");
  EXPECT_EQ(Exact(policy, "/usr")->origin, GrantOrigin::kSystem);
  EXPECT_EQ(AccessOf(policy, "/etc"), "r");
  EXPECT_EQ(policy.network(), NetworkMode::kNone);
  EXPECT_EQ(policy.enforcement(), Enforcement::kRequired);
  EXPECT_FALSE(policy.timeout().has_value());
  EXPECT_FALSE(policy.pin_sha256().has_value());
  EXPECT_EQ(policy.home(), home_);
}

TEST_F(PolicyTest, GrantsAreSortedParentsFirst) {
  tree_.Dir("data/out/bin");
  tree_.Dir("data-x");
  ASSERT_BUILT(policy, Builder()
                            .AllowExec(tree_.Join("data/out/bin"))
                            .AllowRead(tree_.Join("data-x"))
                            .AllowWrite(tree_.Join("data/out"))
                            .AllowRead(tree_.Join("data")));
  const auto& grants = policy.grants();
  for (size_t i = 1; i < grants.size(); ++i) {
    EXPECT_LT(grants[i - 1].path.path, grants[i].path.path);
  }
  for (size_t i = 0; i < grants.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      EXPECT_FALSE(IsWithin(grants[j].path.path, grants[i].path.path))
          << grants[i].path.path << " (a parent) comes after " << grants[j].path.path;
    }
  }
}

TEST_F(PolicyTest, ReadGrantInsideWorkspaceIsMergedAway) {
  std::string sub = tree_.Dir("ws/sub");
  ASSERT_BUILT(policy, Builder().AllowRead(sub).AllowWrite(sub));
  EXPECT_EQ(Exact(policy, sub), nullptr);
  ASSERT_NE(policy.GrantFor(sub + "/file"), nullptr);
  EXPECT_EQ(policy.GrantFor(sub + "/file")->path.path, workspace_);
}

// An executor's $HOME and $TMPDIR: granted read-write, and no protected
// path is looked for there (the calls share them; nothing outside the
// sandbox runs from them). The workspace keeps its protected paths. A
// scratch directory that is or holds another grant is refused (that
// grant's protected paths would go unguarded), and so is one inside a
// grant (every executor of a set has its grants: another executor would
// reach this one's $HOME).
TEST_F(PolicyTest, ScratchDirectoriesAreWritableAndHoldNoProtectedPaths) {
  std::string scratch = tree_.Dir("scratch/home");
  PolicySpec spec;
  spec.workspace = workspace_;
  spec.scratch_dirs = {scratch};
  Result<Policy> policy = BuildPolicy(Host(), spec);
  ASSERT_TRUE(policy.ok()) << policy.error().ToString();
  ASSERT_NE(Exact(*policy, scratch), nullptr);
  EXPECT_EQ(AccessOf(*policy, scratch), "rw");
  EXPECT_EQ(GrantOriginName(Exact(*policy, scratch)->origin), "scratch");
  std::vector<std::string> roots = policy->WritableRoots();
  EXPECT_EQ(std::find(roots.begin(), roots.end(), scratch), roots.end());
  bool workspace_protected = false;
  for (const ProtectedPath& entry : policy->protected_paths().paths) {
    EXPECT_FALSE(IsWithin(entry.path, scratch)) << entry.path;
    workspace_protected = workspace_protected || entry.root == workspace_;
  }
  EXPECT_TRUE(workspace_protected);

  std::string shown = tree_.Dir("shown/scratch");
  spec.allow_read = {tree_.Join("shown")};
  const std::vector<std::pair<std::vector<std::string>, std::string>> refusals = {
      {{workspace_}, "the scratch must be a directory of its own"},
      {{tree_.path()}, "the scratch must be a directory of its own"},
      {{tree_.Dir("ws/.scratch")}, "put the scratch root outside every grant"},
      {{shown}, "put the scratch root outside every grant"},
      {{scratch, tree_.Dir("scratch/home/tmp")}, "each must be a directory of its own"},
  };
  for (const auto& [dirs, why] : refusals) {
    spec.scratch_dirs = dirs;
    Result<Policy> refused = BuildPolicy(Host(), spec);
    ASSERT_FALSE(refused.ok()) << dirs.front();
    EXPECT_NE(refused.error().message().find(why), std::string::npos) << refused.error().ToString();
  }
}

TEST_F(PolicyTest, WriteGrantInsideReadGrantKeepsReadWrite) {
  std::string data = tree_.Dir("data");
  std::string out = tree_.Dir("data/out");
  ASSERT_BUILT(policy, Builder().AllowRead(data).AllowWrite(out));
  EXPECT_EQ(AccessOf(policy, data), "r");
  EXPECT_EQ(AccessOf(policy, out), "rw");
}

TEST_F(PolicyTest, EffectiveAccessIsTheUnionAlongThePath) {
  std::string data = tree_.Dir("data");
  std::string out = tree_.Dir("data/out");
  std::string bin = tree_.Dir("data/out/bin");
  std::string tools = tree_.Dir("tools/sub");
  ASSERT_BUILT(policy, Builder().AllowWrite(data).AllowExec(bin).AllowRead(out).AllowExec(tree_.Join("tools"))
                            .AllowWrite(tools));
  EXPECT_EQ(AccessOf(policy, data), "rw");
  EXPECT_EQ(Exact(policy, out), nullptr) << "a read grant inside a write grant adds nothing";
  EXPECT_EQ(AccessOf(policy, bin), "rwx");
  EXPECT_EQ(AccessOf(policy, tree_.Join("tools")), "rx");
  EXPECT_EQ(AccessOf(policy, tools), "rwx");
}

TEST_F(PolicyTest, SamePathNamedTwiceGetsTheUnion) {
  std::string data = tree_.Dir("data");
  ASSERT_BUILT(policy, Builder().AllowRead(data).AllowExec(data).AllowWrite(data + "/"));
  EXPECT_EQ(AccessOf(policy, data), "rwx");
  EXPECT_EQ(std::count_if(policy.grants().begin(), policy.grants().end(),
                          [&](const PathGrant& g) { return g.path.path == data; }),
            1);
}

TEST_F(PolicyTest, BadGrantPathsAreRefused) {
  tree_.Dir("real");
  tree_.Symlink("link", "real");
  EXPECT_NE(Refusal(Builder().AllowRead("relative/dir")).find("relative path"), std::string::npos);
  EXPECT_NE(Refusal(Builder().AllowWrite(tree_.Join("missing"))).find("--allow-write"), std::string::npos);
  EXPECT_NE(Refusal(Builder().AllowRead(tree_.Join("real/../real"))).find("'..'"), std::string::npos);
  EXPECT_NE(Refusal(Builder().AllowExec(tree_.Join("link"))).find("symlink"), std::string::npos);
  EXPECT_NE(Refusal(Builder().AllowRead("/")).find("whole filesystem"), std::string::npos);
}

TEST_F(PolicyTest, WorkspaceRefusalsNameTheFlags) {
  std::string message = Refusal(Builder().Workspace("/"));
  EXPECT_NE(message.find("--no-workspace"), std::string::npos) << message;
  message = Refusal(Builder().Workspace(home_));
  EXPECT_NE(message.find("home directory"), std::string::npos) << message;
  HostContext at_root = Host();
  at_root.cwd = "/";
  message = Refusal(PolicyBuilder(at_root));
  EXPECT_NE(message.find("--workspace"), std::string::npos) << message;
  std::string file = tree_.File("plain.txt");
  EXPECT_NE(Refusal(Builder().Workspace(file)).find("not a directory"), std::string::npos);
}

TEST_F(PolicyTest, AllowEnvValidation) {
  for (const char* bad : {"", "1ABC", "A-B", "A=B", "A B", "NAME\n"}) {
    std::string message = Refusal(Builder().AllowEnv(bad));
    EXPECT_NE(message.find("--allow-env"), std::string::npos) << "'" << bad << "': " << message;
    EXPECT_NE(message.find("not a valid environment variable name"), std::string::npos) << message;
  }
  ASSERT_BUILT(policy, Builder().AllowEnv("ZED").AllowEnv("_under").AllowEnv("CC1").AllowEnv("PATH").AllowEnv("ZED"));
  EXPECT_EQ(policy.env_allow(), (std::vector<std::string>{"CC1", "ZED", "_under"}));
}

TEST_F(PolicyTest, TimeoutMustBePositive) {
  EXPECT_NE(Refusal(Builder().Timeout(0s)).find("--timeout"), std::string::npos);
  EXPECT_NE(Refusal(Builder().Timeout(-5s)).find("positive"), std::string::npos);
  ASSERT_BUILT(policy, Builder().Timeout(30s));
  ASSERT_TRUE(policy.timeout().has_value());
  EXPECT_EQ(*policy.timeout(), 30s);
}

TEST_F(PolicyTest, PinSha256MustBeLowerCaseHex) {
  const std::string good(64, 'a');
  std::string upper = good;
  upper[3] = 'A';
  for (const std::string& bad : {std::string(63, 'a'), std::string(65, 'a'), upper, std::string(64, 'g'),
                                 std::string()}) {
    std::string message = Refusal(Builder().PinSha256(bad));
    EXPECT_NE(message.find("--pin-sha256"), std::string::npos) << message;
    EXPECT_NE(message.find("corral hash PATH"), std::string::npos) << message;
  }
  ASSERT_BUILT(policy, Builder().PinSha256("0123456789abcdef" + std::string(48, 'f')));
  ASSERT_TRUE(policy.pin_sha256().has_value());
  EXPECT_EQ(policy.pin_sha256()->size(), 64u);
}

TEST_F(PolicyTest, NoWorkspace) {
  std::string data = tree_.Dir("data");
  ASSERT_BUILT(policy, Builder().NoWorkspace().AllowRead(data));
  EXPECT_FALSE(policy.workspace().has_value());
  EXPECT_EQ(Exact(policy, workspace_), nullptr);
  EXPECT_EQ(AccessOf(policy, data), "r");
  EXPECT_TRUE(policy.WritableRoots().empty());
  // No workspace from the working directory either, so "/" as cwd is fine.
  HostContext at_root = Host();
  at_root.cwd = "/";
  EXPECT_TRUE(PolicyBuilder(at_root).NoWorkspace().Build().ok());
  PolicySpec both;
  both.workspace = workspace_;
  both.no_workspace = true;
  EXPECT_NE(Refusal(PolicyBuilder(Host(), both)).find("cannot be combined"), std::string::npos);
}

// Paths are bytes: a name that is not UTF-8 builds (no exception from the
// JSON library) and the fingerprint tells such names apart exactly.
TEST_F(PolicyTest, FingerprintKeepsBytesThatAreNotUtf8) {
  std::string odd = tree_.Dir(std::string("d\x9b"));
  ASSERT_BUILT(read, Builder().AllowRead(odd));
  EXPECT_NE(read.CanonicalJson().find("bytes_hex"), std::string::npos) << read.CanonicalJson();
  std::string a = Fingerprint(Builder().ForbidRead(std::string("x\x9b")));
  std::string b = Fingerprint(Builder().ForbidRead(std::string("x\x9c")));
  std::string replaced = Fingerprint(Builder().ForbidRead("x\xef\xbf\xbd"));
  EXPECT_EQ(a.size(), 64u) << a;
  EXPECT_NE(a, b);
  EXPECT_NE(a, replaced);
}

TEST_F(PolicyTest, FingerprintIsStableAndFollowsTheGrants) {
  std::string data = tree_.Dir("data");
  ASSERT_BUILT(first, Builder().AllowRead(data));
  ASSERT_BUILT(second, Builder().AllowRead(data));
  EXPECT_EQ(first.fingerprint(), second.fingerprint());
  EXPECT_EQ(first.CanonicalJson(), second.CanonicalJson());
  EXPECT_EQ(first.fingerprint().size(), 64u);
  EXPECT_NE(Fingerprint(Builder().AllowWrite(data)), first.fingerprint());
  EXPECT_NE(Fingerprint(Builder().AllowRead(tree_.Dir("other"))), first.fingerprint());
  EXPECT_NE(Fingerprint(Builder().AllowRead(data).Network(NetworkMode::kAll)), first.fingerprint());
  EXPECT_NE(Fingerprint(Builder().AllowRead(data).Timeout(5s)), first.fingerprint());
  // Host identities are not part of it: the same path re-created keeps it.
  ASSERT_EQ(::rmdir(data.c_str()), 0);
  tree_.Dir("data");
  EXPECT_EQ(Fingerprint(Builder().AllowRead(data)), first.fingerprint());
}

TEST_F(PolicyTest, WritableRootsAreWorkspaceAndWriteGrants) {
  std::string out = tree_.Dir("out");
  std::string data = tree_.Dir("data");
  ASSERT_BUILT(policy, Builder().AllowWrite(out).AllowRead(data));
  std::vector<std::string> roots = policy.WritableRoots();
  std::sort(roots.begin(), roots.end());
  EXPECT_EQ(roots, (std::vector<std::string>{out, workspace_}));
  ASSERT_BUILT(read_only, Builder().AllowWrite(out).SetMode(Mode::kReadOnly));
  EXPECT_TRUE(read_only.WritableRoots().empty());
  EXPECT_FALSE(read_only.notes().empty());
}

TEST_F(PolicyTest, GrantForFindsTheDeepestGrant) {
  std::string data = tree_.Dir("data");
  std::string out = tree_.Dir("data/out");
  ASSERT_BUILT(policy, Builder().AllowRead(data).AllowWrite(out));
  ASSERT_NE(policy.GrantFor(out + "/x/y"), nullptr);
  EXPECT_EQ(policy.GrantFor(out + "/x/y")->path.path, out);
  EXPECT_EQ(policy.GrantFor(data + "/file")->path.path, data);
  EXPECT_EQ(policy.GrantFor(data)->path.path, data);
  EXPECT_EQ(policy.GrantFor("/usr/bin/env")->path.path, "/usr");
  EXPECT_EQ(policy.GrantFor(tree_.Join("data-other")), nullptr);
  EXPECT_EQ(policy.GrantFor(home_), nullptr);
  EXPECT_EQ(policy.GrantFor("/root"), nullptr);
}

TEST_F(PolicyTest, MasksSkipAnExplicitlyGrantedSecret) {
  struct stat st;
  // Hidden: masked, or (root) in an /etc seen as others see it, where a
  // file others may not read stays unreadable (confine/etc_view.h).
  auto masked = [](const Policy& policy, const std::string& path) {
    if (policy.etc_view() == EtcView::kAsOthers && IsWithin(path, "/etc")) return true;
    return std::any_of(policy.masks().begin(), policy.masks().end(),
                       [&](const MaskedPath& m) { return m.path == path; });
  };
  ASSERT_BUILT(by_default, Builder());
  // Only a secret the caller can read needs a mask (see DiscoverEtcSecrets):
  // for a caller that cannot read /etc/shadow (or a host without one) there
  // is none, and the kernel's own permission check is what hides it.
  if (::lstat("/etc/shadow", &st) != 0 || ::access("/etc/shadow", R_OK) != 0) {
    EXPECT_FALSE(masked(by_default, "/etc/shadow"));
    ASSERT_BUILT(etc, Builder().AllowRead("/etc"));
    EXPECT_FALSE(masked(etc, "/etc/shadow"));
    return;
  }
  EXPECT_TRUE(masked(by_default, "/etc/shadow"));
  ASSERT_BUILT(granted, Builder().AllowRead("/etc/shadow"));
  EXPECT_FALSE(masked(granted, "/etc/shadow"));
  // Granting /etc itself does not unmask what lies inside it.
  ASSERT_BUILT(etc, Builder().AllowRead("/etc"));
  EXPECT_TRUE(masked(etc, "/etc/shadow"));
  // Without system roots nothing in /etc is granted, so nothing is masked.
  ASSERT_BUILT(bare, Builder().WithoutSystemRoots());
  EXPECT_FALSE(masked(bare, "/etc/shadow"));
}

// In a forked child with a private mount namespace (and a user namespace when
// not root), a tmpfs over /etc/ssl/private holds two keys. Exit codes: 0 ok,
// 1 setup failed, 2 the nested grant unmasked its siblings, 3 the refusal does
// not name the directory, 4 granting the directory itself failed or kept the mask.
int NestedSecretChild(const HostContext& host) {
  const std::string dir = "/etc/ssl/private";
  uid_t uid = ::getuid();
  gid_t gid = ::getgid();
  if (uid != 0) {
    if (::unshare(CLONE_NEWUSER) != 0) return 1;
    std::string uid_map = std::to_string(uid) + " " + std::to_string(uid) + " 1\n";
    std::string gid_map = std::to_string(gid) + " " + std::to_string(gid) + " 1\n";
    std::ofstream("/proc/self/setgroups") << "deny";
    std::ofstream("/proc/self/uid_map") << uid_map;
    std::ofstream("/proc/self/gid_map") << gid_map;
  }
  if (::unshare(CLONE_NEWNS) != 0 || ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
      ::mount("tmpfs", dir.c_str(), "tmpfs", 0, "mode=0700") != 0) {
    return 1;
  }
  std::ofstream(dir + "/one.pem") << "one";
  std::ofstream(dir + "/two.pem") << "two";
  Result<Policy> nested = PolicyBuilder(host).AllowRead(dir + "/one.pem").Build();
  if (nested.ok()) {
    bool masked = std::any_of(nested->masks().begin(), nested->masks().end(),
                              [&](const MaskedPath& m) { return IsWithin(dir + "/two.pem", m.path); });
    if (!masked) return 2;
  } else if (nested.error().message().find(dir) == std::string::npos) {
    return 3;
  }
  Result<Policy> whole = PolicyBuilder(host).AllowRead(dir).Build();
  if (!whole.ok()) return 4;
  bool masked = std::any_of(whole->masks().begin(), whole->masks().end(),
                            [&](const MaskedPath& m) { return m.path == dir; });
  return masked ? 4 : 0;
}

TEST_F(PolicyTest, GrantInsideAMaskedDirectoryDoesNotUnmaskItsSiblings) {
  struct stat st;
  if (::lstat("/etc/ssl/private", &st) != 0 || !S_ISDIR(st.st_mode)) {
    // No such directory on this host: nothing can be masked there.
    ASSERT_BUILT(etc, Builder().AllowRead("/etc"));
    for (const MaskedPath& mask : etc.masks()) EXPECT_FALSE(IsWithin(mask.path, "/etc/ssl/private")) << mask.path;
    return;
  }
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) ::_exit(NestedSecretChild(Host()));
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST_F(PolicyTest, DangerFullAccessNeedsAcknowledgement) {
  EXPECT_NE(Refusal(Builder().SetMode(Mode::kDangerFullAccess)).find("--i-understand-danger-full-access"),
            std::string::npos);
  ASSERT_BUILT(danger, Builder().SetMode(Mode::kDangerFullAccess).AcknowledgeDangerFullAccess());
  EXPECT_TRUE(danger.unconfined());
}

// Grants that would do nothing, or show a credential store, are refused.
TEST_F(PolicyTest, GrantsCorralsOwnMountsCoverOrAPatternHidesAreRefused) {
  EXPECT_NE(Refusal(Builder().AllowWrite("/dev/shm")).find("its own /dev"), std::string::npos);
  EXPECT_NE(Refusal(Builder().AllowRead("/proc/sys")).find("its own /proc"), std::string::npos);
  std::string sub = tree_.Dir("out/sub");
  std::string out = tree_.path() + "/out";
  EXPECT_NE(Refusal(Builder().AllowRead(sub).ForbidRead(out)).find("forbid_read"), std::string::npos);
  EXPECT_NE(Refusal(Builder().AllowRead(sub).ForbidRead(tree_.path() + "/o*")).find("forbid_read"),
            std::string::npos);
  EXPECT_EQ(Refusal(Builder().AllowRead(sub).ForbidRead(sub + "/x")), "built");
}

TEST_F(PolicyTest, CredentialStoresNeedTheirOwnFlagAndAreMaskedInsideGrants) {
  std::string ssh = tree_.Dir("home/.ssh");
  tree_.Dir("home/.aws");
  EXPECT_NE(Refusal(Builder().AllowRead(ssh)).find("--allow-credential " + ssh), std::string::npos);
  EXPECT_NE(Refusal(Builder().AllowCredential(home_)).find("not a credential store"), std::string::npos);
  ASSERT_BUILT(home, Builder().AllowRead(home_));
  std::vector<std::string> masked;
  for (const MaskedPath& mask : home.masks()) masked.push_back(mask.path);
  EXPECT_NE(std::find(masked.begin(), masked.end(), ssh), masked.end());
  ASSERT_BUILT(allowed, Builder().AllowRead(home_).AllowCredential(ssh));
  EXPECT_EQ(allowed.CredentialGrants(), std::vector<std::string>{ssh});
  for (const MaskedPath& mask : allowed.masks()) EXPECT_FALSE(IsWithin(mask.path, ssh)) << mask.path;
  EXPECT_TRUE(std::any_of(allowed.masks().begin(), allowed.masks().end(),
                          [&](const MaskedPath& m) { return m.path == home_ + "/.aws"; }));
  // The passwd entry's home too, when $HOME names another directory.
  std::string real = tree_.Dir("real");
  std::string real_ssh = tree_.Dir("real/.ssh");
  HostContext host = Host();
  host.passwd_home = real;
  ASSERT_BUILT(other, PolicyBuilder(host).AllowRead(real));
  EXPECT_TRUE(std::any_of(other.masks().begin(), other.masks().end(),
                          [&](const MaskedPath& m) { return m.path == real_ssh; }));
}

// A passwd home that does not exist (uid 65534's /nonexistent), or is a file,
// is settled by one stat of it; the stores of $HOME are found and hidden as
// before, and the policy builds.
TEST_F(PolicyTest, AnAbsentPasswdHomeLeavesTheOtherHomesStoresHidden) {
  std::string ssh = tree_.Dir("home/.ssh");
  std::string file_home = tree_.path() + "/plain";
  { std::ofstream(file_home) << "x"; }
  for (const std::string& absent : {tree_.path() + "/nonexistent", file_home}) {
    HostContext host = Host();
    host.passwd_home = absent;
    ASSERT_BUILT(policy, PolicyBuilder(host).AllowRead(home_));
    EXPECT_TRUE(std::any_of(policy.masks().begin(), policy.masks().end(),
                            [&](const MaskedPath& m) { return m.path == ssh; }))
        << absent;
    EXPECT_NE(Refusal(PolicyBuilder(host).AllowRead(ssh)).find("--allow-credential " + ssh), std::string::npos);
  }
}

}  // namespace
}  // namespace corral
