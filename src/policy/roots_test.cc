// Roots the policy derives from the host: the workspace vetting (which only
// compares strings, so any path may be passed) and the system trees of this
// merged-/usr host.
#include "policy/roots.h"

#include <sys/stat.h>

#include <gtest/gtest.h>

#include <algorithm>
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

}  // namespace
}  // namespace corral
