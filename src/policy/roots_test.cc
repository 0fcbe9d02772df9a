// Roots the policy derives from the host: the workspace vetting (which only
// compares strings, so any path may be passed) and the system trees of this
// merged-/usr host.
#include "policy/roots.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <string>

namespace corral {
namespace {

HostContext FakeHost() {
  HostContext host;
  host.cwd = "/srv/project";
  host.home = "/home/alice";
  host.uid = 1000;
  host.gid = 1000;
  return host;
}

// The refusal message, or "" when the workspace was accepted.
std::string Refusal(const std::string& path, WorkspaceSource source = WorkspaceSource::kExplicit) {
  Result<void> vetted = VetWorkspace(path, FakeHost(), source);
  if (vetted.ok()) return "";
  EXPECT_EQ(vetted.error().kind(), ErrorKind::kPolicy);
  return vetted.error().message();
}

TEST(VetWorkspace, RefusesRootHomeAndSharedTrees) {
  const char* refused[] = {
      "/",          "/home/alice", "/home",      "/usr",   "/usr/share", "/usr/local/src", "/etc",
      "/etc/ssh",   "/tmp",        "/var",       "/var/tmp", "/var/lib", "/bin",           "/lib",
      "/proc/self", "/sys",        "/dev",       "/run/user", "/root",   "/opt",           "/srv",
      "/mnt",       "/media",      "/var/home",  "/Users",  "/boot",
  };
  for (const char* path : refused) {
    for (WorkspaceSource source : {WorkspaceSource::kDerived, WorkspaceSource::kExplicit}) {
      std::string message = Refusal(path, source);
      EXPECT_NE(message, "") << path << " was accepted as a workspace";
    }
  }
}

TEST(VetWorkspace, RefusesAnAncestorOfHome) {
  HostContext host = FakeHost();
  host.home = "/data/users/alice";
  for (const char* path : {"/data", "/data/users", "/data/users/alice"}) {
    EXPECT_FALSE(VetWorkspace(path, host, WorkspaceSource::kExplicit).ok()) << path;
  }
  EXPECT_NE(Refusal("/home").find("holds"), std::string::npos);
  EXPECT_NE(Refusal("/home/alice").find("your home directory"), std::string::npos);
  // A directory beside home, or inside it, is a project.
  EXPECT_TRUE(VetWorkspace("/data/users/alice/src/app", host, WorkspaceSource::kExplicit).ok());
  EXPECT_TRUE(VetWorkspace("/data/users/bob", host, WorkspaceSource::kExplicit).ok());
}

TEST(VetWorkspace, RefusalNamesTheFlagsToUseInstead) {
  for (const char* path : {"/", "/home/alice", "/usr/share", "/tmp"}) {
    std::string message = Refusal(path);
    EXPECT_NE(message.find("refusing to use " + std::string(path)), std::string::npos) << message;
    EXPECT_NE(message.find("--workspace"), std::string::npos) << message;
    EXPECT_NE(message.find("--no-workspace"), std::string::npos) << message;
  }
}

TEST(VetWorkspace, AcceptsProjectDirectories) {
  for (const char* path : {"/srv/project", "/home/alice/src/corral", "/tmp/build-123", "/var/tmp/x/y",
                           "/opt/work/app", "/work/main", "/home/bob/project", "/usrx", "/etcetera"}) {
    EXPECT_EQ(Refusal(path), "") << path;
  }
}

TEST(DiscoverSystemRoots, FindsUsrReadAndExec) {
  SystemRoots roots = DiscoverSystemRoots();
  auto usr = std::find_if(roots.trees.begin(), roots.trees.end(),
                          [](const SystemTree& tree) { return tree.path.path == "/usr"; });
  ASSERT_NE(usr, roots.trees.end());
  EXPECT_EQ(usr->access, Access::kRead | Access::kExec);
  EXPECT_TRUE(usr->path.is_dir());
  struct stat st = {};
  ASSERT_EQ(::lstat("/usr", &st), 0);
  EXPECT_EQ(usr->path.id, (FileIdentity{st.st_dev, st.st_ino}));
  auto etc = std::find_if(roots.trees.begin(), roots.trees.end(),
                          [](const SystemTree& tree) { return tree.path.path == "/etc"; });
  ASSERT_NE(etc, roots.trees.end());
  EXPECT_EQ(etc->access, Access::kRead);
  for (const SystemTree& tree : roots.trees) {
    EXPECT_NE(tree.path.path, "/boot");
    EXPECT_NE(tree.path.path, "/opt");
  }
}

TEST(DiscoverSystemRoots, ReportsMergedUsrSymlinks) {
  struct stat st = {};
  ASSERT_EQ(::lstat("/bin", &st), 0);
  SystemRoots roots = DiscoverSystemRoots();
  auto link = std::find_if(roots.symlinks.begin(), roots.symlinks.end(),
                           [](const SystemSymlink& entry) { return entry.path == "/bin"; });
  auto tree = std::find_if(roots.trees.begin(), roots.trees.end(),
                           [](const SystemTree& entry) { return entry.path.path == "/bin"; });
  if (S_ISLNK(st.st_mode)) {
    // Merged /usr: /bin is recreated as the same symlink, never granted as a tree.
    ASSERT_NE(link, roots.symlinks.end());
    EXPECT_EQ(link->target, "usr/bin");
    EXPECT_EQ(tree, roots.trees.end());
  } else {
    // A real /bin directory is granted as a tree (read and exec), not a symlink.
    ASSERT_TRUE(S_ISDIR(st.st_mode));
    ASSERT_NE(tree, roots.trees.end());
    EXPECT_EQ(tree->path.id, (FileIdentity{st.st_dev, st.st_ino}));
    EXPECT_EQ(link, roots.symlinks.end());
  }
}

// DiscoverEtcSecrets in a forked child that sees a tmpfs of our making as
// /etc (a user namespace first when not root). Exit codes: 0 ok, 1 setup
// failed, 2 root's masks are wrong, 3 a user's masks are wrong, 4 a too
// deep /etc was not refused.
int EtcSecretsChild() {
  uid_t uid = ::getuid();
  gid_t gid = ::getgid();
  if (uid != 0) {
    if (::unshare(CLONE_NEWUSER) != 0) return 1;
    std::ofstream("/proc/self/setgroups") << "deny";
    std::ofstream("/proc/self/uid_map") << std::to_string(uid) + " " + std::to_string(uid) + " 1\n";
    std::ofstream("/proc/self/gid_map") << std::to_string(gid) + " " + std::to_string(gid) + " 1\n";
  }
  if (::unshare(CLONE_NEWNS) != 0 || ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
      ::mount("tmpfs", "/etc", "tmpfs", 0, "mode=0755") != 0) {
    return 1;
  }
  ::umask(0);
  auto file = [](const std::string& path, mode_t mode) {
    int fd = ::open(path.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, mode);
    if (fd >= 0) ::close(fd);
  };
  file("/etc/public", 0644);
  file("/etc/secret", 0600);
  file("/etc/group-only", 0640);
  file("/etc/shadow", 0644);  // a listed secret this caller can read
  ::mkdir("/etc/private", 0700);
  file("/etc/private/inner", 0644);
  ::mkdir("/etc/unsearchable", 0744);
  ::mkdir("/etc/sub", 0755);
  ::mkdir("/etc/sub/deep", 0755);
  file("/etc/sub/deep/key", 0600);
  file("/etc/sub/deep/ok", 0444);
  if (::symlink("secret", "/etc/link") != 0) return 1;

  auto listed = [](const std::vector<MaskedPath>& masks) {
    std::set<std::string> paths;
    for (const MaskedPath& mask : masks) paths.insert(mask.path + (mask.is_dir ? "/" : ""));
    return paths;
  };
  Result<std::vector<MaskedPath>> root = DiscoverEtcSecrets(0);
  std::set<std::string> root_expected = {"/etc/secret", "/etc/group-only", "/etc/private/", "/etc/unsearchable/",
                                         "/etc/sub/deep/key"};
  if (!root.ok() || listed(*root) != root_expected) return 2;
  // A regular user gets the well-known list only: the rest the kernel hides.
  Result<std::vector<MaskedPath>> user = DiscoverEtcSecrets(1000);
  if (!user.ok() || listed(*user) != std::set<std::string>{"/etc/shadow"}) return 3;

  std::string deep = "/etc/sub";
  for (int i = 0; i < 70; ++i) {
    deep += "/d";
    if (::mkdir(deep.c_str(), 0755) != 0) return 1;
  }
  Result<std::vector<MaskedPath>> too_deep = DiscoverEtcSecrets(0);
  if (too_deep.ok() || too_deep.error().message().find("nested too deeply") == std::string::npos) return 4;
  return 0;
}

TEST(DiscoverEtcSecrets, RootSeesEtcAsAnUnprivilegedUserWould) {
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) ::_exit(EtcSecretsChild());
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "see EtcSecretsChild for the code";
}

}  // namespace
}  // namespace corral
