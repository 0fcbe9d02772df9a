// ObservedThread and NameWatch together, as an executor's PolicyCache uses
// them: work runs on the observed thread, each name it looks at is watched
// first, and then the tree is changed from this thread the ways that would
// change the work's answer (and ways that would not). Needs seccomp user
// notification (Linux 5.5): a kernel without it fails here.
#include "kernel/name_watch.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <fstream>
#include <functional>
#include <memory>
#include <sched.h>
#include <string>
#include <thread>
#include <vector>

#include "kernel/namespaces.h"
#include "kernel/observed_thread.h"
#include "testing/test_scratch_dir.h"

namespace corral {
namespace {

using testing::TestTree;

class Watched : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<std::unique_ptr<ObservedThread>> started = ObservedThread::Start();
    ASSERT_TRUE(started.ok()) << started.error().ToString();
    thread_ = std::move(started).value();
  }
  // A watch of everything `work` looked at.
  NameWatch Watch(const std::function<void()>& work) {
    Result<NameWatch> watch = NameWatch::Open();
    EXPECT_TRUE(watch.ok());
    thread_->Run(work, [&](const ObservedCall& call) {
      calls_.push_back(call);
      watch->Observe(call);
    });
    return std::move(watch).value();
  }
  static bool Stat(const std::string& path) {
    struct stat st;
    return ::stat(path.c_str(), &st) == 0;
  }
  static std::string Read(const std::string& path) {
    std::ifstream in(path);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }

  std::unique_ptr<ObservedThread> thread_;
  std::vector<ObservedCall> calls_;
  TestTree tree_;
};

TEST_F(Watched, TheThreadsLookupsReachTheObserverBeforeTheyRun) {
  tree_.File("a/b", "x");
  std::string listed;
  int getcwd_ok = 0;
  thread_->Run(
      [&] {
        (void)Stat(tree_.Join("a/b"));
        DIR* dir = ::opendir(tree_.Join("a").c_str());
        while (dir != nullptr && ::readdir(dir) != nullptr) {
        }
        if (dir != nullptr) ::closedir(dir);
        char here[4096];
        getcwd_ok = ::getcwd(here, sizeof(here)) != nullptr;
      },
      [&](const ObservedCall& call) { calls_.push_back(call); });
  EXPECT_TRUE(getcwd_ok) << "an observed call runs as it would have";
  bool stat_seen = false, listing_seen = false, other_seen = false;
  for (const ObservedCall& call : calls_) {
    stat_seen |= call.kind == ObservedCall::Kind::kLookup && call.path == tree_.Join("a/b");
    listing_seen |= call.kind == ObservedCall::Kind::kListing;
    other_seen |= call.kind == ObservedCall::Kind::kOther;
  }
  EXPECT_TRUE(stat_seen);
  EXPECT_TRUE(listing_seen);
  EXPECT_TRUE(other_seen) << "getcwd is not decoded: it comes as kOther";
}

// A caller that will not wait finds the thread busy and runs nothing there:
// one blocked derivation holds up no other executor.
TEST_F(Watched, ACallerThatWillNotWaitIsToldTheThreadIsBusy) {
  std::atomic<bool> release = false;
  std::atomic<bool> started = false;
  std::thread first([&] {
    thread_->Run(
        [&] {
          started = true;
          while (!release) ::usleep(1000);
        },
        [](const ObservedCall&) {});
  });
  while (!started) ::usleep(1000);
  int ran = 0;
  EXPECT_FALSE(thread_->Run([&] { ran = 1; }, [](const ObservedCall&) {}, ObservedThread::IfBusy::kReturn));
  EXPECT_EQ(ran, 0);
  release = true;
  first.join();
  EXPECT_TRUE(thread_->Run([&] { ran = 1; }, [](const ObservedCall&) {}, ObservedThread::IfBusy::kReturn));
  EXPECT_EQ(ran, 1);
}

TEST_F(Watched, AnExceptionOnTheThreadComesBackToTheCaller) {
  EXPECT_THROW(thread_->Run([] { throw std::runtime_error("x"); }, [](const ObservedCall&) {}), std::runtime_error);
  int ran = 0;
  thread_->Run([&] { ran = 1; }, [](const ObservedCall&) {});
  EXPECT_EQ(ran, 1) << "the thread goes on after it";
}

TEST_F(Watched, NothingChangedIsNoChangeAndAnUnrelatedNameIsNone) {
  tree_.File("dir/file", "x");
  NameWatch watch = Watch([&] { (void)Read(tree_.Join("dir/file")); });
  EXPECT_EQ(watch.unwatchable(), "");
  EXPECT_FALSE(watch.Changed());
  tree_.File("other", "y");            // beside a directory passed through
  tree_.File("dir/sibling", "y");      // beside the file read
  (void)Read(tree_.Join("dir/file"));  // reading is no change
  EXPECT_FALSE(watch.Changed());
}

TEST_F(Watched, AMissingNameThatAppearsIsAChange) {
  NameWatch watch = Watch([&] { (void)Stat(tree_.Join("not/yet")); });
  ASSERT_EQ(watch.unwatchable(), "");
  tree_.Dir("not");
  EXPECT_TRUE(watch.Changed());
}

TEST_F(Watched, AnAncestorRenamedIsAChange) {
  tree_.File("up/down/file", "x");
  NameWatch watch = Watch([&] { (void)Stat(tree_.Join("up/down/file")); });
  ASSERT_EQ(watch.unwatchable(), "");
  ASSERT_EQ(::rename(tree_.Join("up").c_str(), tree_.Join("moved").c_str()), 0);
  EXPECT_TRUE(watch.Changed());
}

TEST_F(Watched, ALinkOnTheWayRetargetedOrItsTargetChangedIsAChange) {
  tree_.File("real/file", "x");
  tree_.Dir("elsewhere");
  tree_.Symlink("link", "real");
  {
    NameWatch watch = Watch([&] { (void)Stat(tree_.Join("link/file")); });
    ASSERT_EQ(watch.unwatchable(), "");
    ASSERT_EQ(::unlink(tree_.Join("real/file").c_str()), 0);  // in the directory the link leads to
    EXPECT_TRUE(watch.Changed());
  }
  tree_.File("real/file", "x");
  NameWatch watch = Watch([&] { (void)Stat(tree_.Join("link/file")); });
  ASSERT_EQ(watch.unwatchable(), "");
  ASSERT_EQ(::unlink(tree_.Join("link").c_str()), 0);
  ASSERT_EQ(::symlink("elsewhere", tree_.Join("link").c_str()), 0);
  EXPECT_TRUE(watch.Changed());
}

TEST_F(Watched, ContentWrittenThroughAnotherLinkIsAChange) {
  tree_.File("seen/file", "x");
  tree_.Dir("hidden");
  ASSERT_EQ(::link(tree_.Join("seen/file").c_str(), tree_.Join("hidden/alias").c_str()), 0);
  NameWatch watch = Watch([&] { (void)Read(tree_.Join("seen/file")); });
  ASSERT_EQ(watch.unwatchable(), "");
  std::ofstream(tree_.Join("hidden/alias"), std::ios::app) << "more";
  EXPECT_TRUE(watch.Changed());
}

TEST_F(Watched, ANameAddedToAListedDirectoryIsAChangeAndAFileWrittenThereIsNot) {
  tree_.File("listed/present", "x");
  NameWatch watch = Watch([&] {
    DIR* dir = ::opendir(tree_.Join("listed").c_str());
    while (dir != nullptr && ::readdir(dir) != nullptr) {
    }
    if (dir != nullptr) ::closedir(dir);
  });
  ASSERT_EQ(watch.unwatchable(), "");
  std::ofstream(tree_.Join("listed/present"), std::ios::app) << "more";  // only the names were read
  EXPECT_FALSE(watch.Changed());
  tree_.File("listed/new", "y");
  EXPECT_TRUE(watch.Changed());
  EXPECT_TRUE(watch.Changed()) << "once changed, stays changed";
}

TEST_F(Watched, AChmodOfADirectoryOnTheWayIsAChange) {
  tree_.File("locked/file", "x");
  NameWatch watch = Watch([&] { (void)Stat(tree_.Join("locked/file")); });
  ASSERT_EQ(watch.unwatchable(), "");
  ASSERT_EQ(::chmod(tree_.Join("locked").c_str(), 0), 0);
  EXPECT_TRUE(watch.Changed());
  ::chmod(tree_.Join("locked").c_str(), 0755);
}

TEST_F(Watched, WhatCannotBeWatchedSaysSo) {
  EXPECT_NE(Watch([] { (void)Stat("/proc/self/status"); }).unwatchable(), "") << "procfs raises no events";
  EXPECT_NE(Watch([&] { (void)Stat(tree_.path() + "/../x"); }).unwatchable(), "");
  EXPECT_NE(Watch([] { (void)Stat("relative"); }).unwatchable(), "");
  EXPECT_NE(Watch([] {
              char here[4096];
              (void)!::getcwd(here, sizeof(here));
            }).unwatchable(),
            "")
      << "a call it does not decode";
}

// Runs `body` in a child process; its exit code is the test's answer.
int InChild(const std::function<int()>& body) {
  pid_t child = ::fork();
  if (child < 0) return -1;
  if (child == 0) ::_exit(body());
  int status = 0;
  if (::waitpid(child, &status, 0) != child || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

ObservedCall LookupOf(const std::string& path) {
  ObservedCall call;
  call.kind = ObservedCall::Kind::kLookup;
  call.dirfd = AT_FDCWD;
  call.path = path;
  call.name = "stat";
  return call;
}

// The watches are the user's (fs.inotify.max_user_watches, shared with
// their editors): a derivation that needs more than kMaxWatches is not kept.
TEST_F(Watched, MoreThanTheCapOfWatchesIsNotWatchable) {
  for (size_t i = 0; i <= NameWatch::kMaxWatches; ++i) tree_.File("many/" + std::to_string(i), "");
  NameWatch watch = Watch([&] {
    for (size_t i = 0; i <= NameWatch::kMaxWatches; ++i) (void)Stat(tree_.Join("many/" + std::to_string(i)));
  });
  EXPECT_NE(watch.unwatchable().find("more than"), std::string::npos) << watch.unwatchable();
  EXPECT_LE(watch.size(), NameWatch::kMaxWatches);
}

// A write into an overlay's upper or lower directory raises an event only
// on that layer's inode: a lookup that passes through an overlay is not
// watchable (the red team's stale `.env`).
TEST_F(Watched, ALookupThroughAnOverlayIsNotWatchable) {
  for (const char* dir : {"lower/sub", "upper", "work", "merged"}) tree_.Dir(dir);
  tree_.File("lower/sub/file", "x");
  int answer = InChild([&] {
    const bool root = ::geteuid() == 0;
    const IdMaps maps = MakeIdMaps(::geteuid(), ::getegid());
    if (::unshare(root ? CLONE_NEWNS : CLONE_NEWUSER | CLONE_NEWNS) != 0) return 2;
    if (!root && WriteIdMapsChild(maps) != 0) return 2;
    if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) return 2;
    std::string options = "lowerdir=" + tree_.Join("lower") + ",upperdir=" + tree_.Join("upper") +
                          ",workdir=" + tree_.Join("work") + (root ? "" : ",userxattr");
    if (::mount("overlay", tree_.Join("merged").c_str(), "overlay", 0, options.c_str()) != 0) return 3;
    Result<NameWatch> watch = NameWatch::Open();
    if (!watch.ok()) return 4;
    watch->Observe(LookupOf(tree_.Join("merged/sub/file")));
    return watch->unwatchable().find("overlayfs") != std::string::npos ? 0 : 1;
  });
  EXPECT_EQ(answer, 0) << "1: the overlay was watched; 2-4: the child could not set up";
}

// A file of the caller's own that it may not read could be linked elsewhere
// and chmod-ed there, unseen: not watchable. Another user's (root's
// /etc/shadow) is watched through its name. As uid 65534, in a child.
TEST_F(Watched, AnUnreadableFileOfYourOwnIsNotWatchableAndAnotherUsersIsWatchedByName) {
  ASSERT_EQ(::chmod(tree_.path().c_str(), 0755), 0);
  int answer = InChild([&] {
    if (::geteuid() == 0 && (::setgid(65534) != 0 || ::setuid(65534) != 0)) return 2;
    char dir[] = "/tmp/corral-unreadable-XXXXXX";
    if (::mkdtemp(dir) == nullptr) return 3;
    std::string mine = std::string(dir) + "/mine";
    int fd = ::open(mine.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0);
    if (fd < 0) return 4;
    ::close(fd);
    Result<NameWatch> own = NameWatch::Open();
    Result<NameWatch> others = NameWatch::Open();
    if (!own.ok() || !others.ok()) return 5;
    own->Observe(LookupOf(mine));
    others->Observe(LookupOf("/etc/shadow"));
    ::unlink(mine.c_str());
    ::rmdir(dir);
    if (own->unwatchable().find("a file of yours") == std::string::npos) return 1;
    return others->unwatchable().empty() ? 0 : 6;
  });
  EXPECT_EQ(answer, 0) << "1: your own unreadable file was watched; 6: /etc/shadow was not watchable; 2-5: setup";
}

// A mount raises no inotify event: the mount table is watched instead. In
// a child with its own user and mount namespaces (any user may make them).
TEST_F(Watched, AMountIsAChange) {
  tree_.Dir("mountpoint");
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (::unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0) ::_exit(2);
    if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) ::_exit(3);
    Result<NameWatch> watch = NameWatch::Open();
    if (!watch.ok()) ::_exit(4);
    if (watch->Changed()) ::_exit(5);
    if (::mount("none", tree_.Join("mountpoint").c_str(), "tmpfs", 0, nullptr) != 0) ::_exit(6);
    ::_exit(watch->Changed() ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "1: the mount was not seen; 2-6: the child could not set up";
}

}  // namespace
}  // namespace corral
