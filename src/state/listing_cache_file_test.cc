#include "state/listing_cache_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "base/directory_names.h"
#include "base/sha256.h"
#include "policy/roots.h"
#include "testing/test_scratch_dir.h"

namespace corral {
namespace {

using corral::testing::TestTree;

constexpr uid_t kNobody = 65534;

// The state's cache, counting the directories it spared the walk.
class CountingCache : public ListingCache {
 public:
  explicit CountingCache(const StateDir& state) : inner(state) {}
  const std::vector<std::string>* Find(ListingOf of, const std::string& dir, const DirectoryKey& key) override {
    const std::vector<std::string>* found = inner.Find(of, dir, key);
    if (found != nullptr) ++hits;
    return found;
  }
  void Remember(ListingOf of, const std::string& dir, const DirectoryKey& key,
                std::vector<std::string> names) override {
    inner.Remember(of, dir, key, std::move(names));
  }
  StateListingCache inner;
  int hits = 0;
};

// Long after every directory of the test tree changed: all of them settled.
struct timespec Later() {
  struct timespec now = {};
  ::clock_gettime(CLOCK_REALTIME, &now);
  now.tv_sec += 3600;
  return now;
}

struct timespec Now() {
  struct timespec now = {};
  ::clock_gettime(CLOCK_REALTIME, &now);
  return now;
}

class ListingCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    etc_ = tree_.Dir("etc");
    Private(tree_.File("etc/a/secret", "key\n"));
    tree_.File("etc/a/public", "conf\n");
    tree_.File("etc/b/c", "conf\n");
    tree_.Dir("etc/b/d");
    Result<StateDir> state = StateDir::OpenBelow(tree_.Join("home"), StateDir::Create::kYes);
    ASSERT_TRUE(state.ok()) << state.error().ToString();
    state_ = std::move(state).value();
  }

  static void Private(const std::string& path) { ASSERT_EQ(::chmod(path.c_str(), 0600), 0); }

  // The masked paths, relative to the tree, sorted.
  std::vector<std::string> Walk(ListingCache* cache, const struct timespec& began) {
    Result<std::vector<MaskedPath>> masks = DiscoverRootOnly(etc_, cache, began);
    EXPECT_TRUE(masks.ok()) << masks.error().ToString();
    std::vector<std::string> paths;
    if (!masks.ok()) return paths;
    for (const MaskedPath& mask : *masks) paths.push_back(mask.path.substr(tree_.path().size() + 1));
    std::sort(paths.begin(), paths.end());
    return paths;
  }

  // Walks once through a fresh cache and saves it.
  void Prime() {
    StateListingCache cache(state_);
    EXPECT_EQ(Walk(&cache, Later()), std::vector<std::string>{"etc/a/secret"});
    cache.Save();
    ASSERT_TRUE(TestTree::Exists(CacheFile()));
  }

  std::string CacheFile() const { return state_.path() + "/" + kListingCacheName; }

  TestTree tree_;
  std::string etc_;
  StateDir state_;
};

TEST_F(ListingCacheTest, ASavedCacheSparesEveryDirectoryRead) {
  Prime();
  struct stat st;
  ASSERT_EQ(::stat(CacheFile().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  CountingCache cache(state_);
  EXPECT_EQ(Walk(&cache, Later()), std::vector<std::string>{"etc/a/secret"});
  EXPECT_EQ(cache.hits, 4);  // etc, a, b, b/d
}

// A chmod changes only the file's own ctime: the listing is still used, and
// the live stat of each name sees the new mode.
TEST_F(ListingCacheTest, AChmodUnderACachedDirectoryIsSeen) {
  Prime();
  Private(tree_.Join("etc/b/c"));
  ASSERT_EQ(::chmod(tree_.Join("etc/b/d").c_str(), 0700), 0);
  CountingCache cache(state_);
  EXPECT_EQ(Walk(&cache, Later()), (std::vector<std::string>{"etc/a/secret", "etc/b/c", "etc/b/d"}));
  EXPECT_GE(cache.hits, 2);
}

// A new file changes its directory's ctime: that directory is listed again.
TEST_F(ListingCacheTest, ANewFileInACachedDirectoryIsSeen) {
  Prime();
  Private(tree_.File("etc/a/new", "key\n"));
  Private(tree_.File("etc/b/d/deep", "key\n"));
  CountingCache cache(state_);
  EXPECT_EQ(Walk(&cache, Later()), (std::vector<std::string>{"etc/a/new", "etc/a/secret", "etc/b/d/deep"}));
  EXPECT_EQ(cache.hits, 2);  // etc and b; a and b/d changed
}

// A directory whose ctime lies within the clock's granularity of the walk
// could change again unseen: it is not remembered.
TEST_F(ListingCacheTest, AJustChangedDirectoryIsNotRemembered) {
  {
    StateListingCache cache(state_);
    EXPECT_EQ(Walk(&cache, Now()), std::vector<std::string>{"etc/a/secret"});
    cache.Save();
  }
  CountingCache cache(state_);
  EXPECT_EQ(Walk(&cache, Later()), std::vector<std::string>{"etc/a/secret"});
  EXPECT_EQ(cache.hits, 0);
}

// The walk's listing of a directory (no symlinks) and the PATH comparison's
// (every name) are kept apart, each found only by its reader, and both
// survive the file. Saving removes the file of earlier versions.
TEST_F(ListingCacheTest, EachReadersListingsAreKeptApart) {
  const std::string earlier = tree_.File("home/corral/etc-listings", "corral-etc-listings 1\n");
  ASSERT_EQ(earlier, state_.path() + "/etc-listings");
  Prime();
  EXPECT_FALSE(TestTree::Exists(earlier));
  struct stat st;
  ASSERT_EQ(::stat(etc_.c_str(), &st), 0);
  const DirectoryKey key{st.st_dev, st.st_ino, st.st_ctim.tv_sec, st.st_ctim.tv_nsec};
  {
    StateListingCache cache(state_);
    ASSERT_NE(cache.Find(ListingOf::kRootOnlyWalk, etc_, key), nullptr);
    EXPECT_EQ(cache.Find(ListingOf::kSearchPath, etc_, key), nullptr);
    cache.Remember(ListingOf::kSearchPath, etc_, key, {"a", "b", "link"});
    cache.Save();
  }
  StateListingCache cache(state_);
  const std::vector<std::string>* path = cache.Find(ListingOf::kSearchPath, etc_, key);
  const std::vector<std::string>* walk = cache.Find(ListingOf::kRootOnlyWalk, etc_, key);
  ASSERT_NE(path, nullptr);
  ASSERT_NE(walk, nullptr);
  EXPECT_EQ(*path, (std::vector<std::string>{"a", "b", "link"}));
  std::vector<std::string> walked = *walk;
  std::sort(walked.begin(), walked.end());
  EXPECT_EQ(walked, (std::vector<std::string>{"a", "b"}));
}

// A run that uses only the PATH comparison's listings keeps the walk's as
// they were (most root runs walk no /etc), and the other way round.
TEST_F(ListingCacheTest, AReaderARunDidNotUseKeepsItsListings) {
  Prime();
  struct stat st;
  ASSERT_EQ(::stat(etc_.c_str(), &st), 0);
  {
    StateListingCache cache(state_);
    cache.Remember(ListingOf::kSearchPath, etc_, KeyOf(st), {"a", "b"});
    cache.Save();
  }
  {
    CountingCache cache(state_);
    EXPECT_EQ(Walk(&cache, Later()), std::vector<std::string>{"etc/a/secret"});
    EXPECT_EQ(cache.hits, 4) << "a run of the PATH comparison alone dropped the walk's listings";
    cache.inner.Save();
  }
  StateListingCache cache(state_);
  EXPECT_NE(cache.Find(ListingOf::kSearchPath, etc_, KeyOf(st)), nullptr)
      << "a run of the walk alone dropped the PATH comparison's listings";
}

// The file beside the cache that Save writes first is always a new one: a
// hard link already at its name (left by a killed run, or planted) is
// removed, and the file it shares is never written through.
TEST_F(ListingCacheTest, SavingNeverWritesThroughWhatIsAtTheTemporaryName) {
  const std::string victim = tree_.File("victim", "keep\n");
  const std::string temp = state_.path() + "/" + kListingCacheName + ".new-" + std::to_string(::getpid());
  ASSERT_EQ(::link(victim.c_str(), temp.c_str()), 0);
  Prime();
  EXPECT_EQ(TestTree::Read(victim), "keep\n");
  EXPECT_FALSE(TestTree::Exists(temp));
  CountingCache cache(state_);
  EXPECT_EQ(Walk(&cache, Later()), std::vector<std::string>{"etc/a/secret"});
  EXPECT_EQ(cache.hits, 4);
}

// What a run killed while it saved left beside the cache goes at a later
// save, once old enough to be no running save's; a fresh one stays.
TEST_F(ListingCacheTest, ASaveRemovesWhatAKilledRunLeftBesideTheCache) {
  const std::string stale = state_.path() + "/" + kListingCacheName + ".new-4000001";
  const std::string fresh = state_.path() + "/" + kListingCacheName + ".new-4000002";
  ASSERT_EQ(::rename(tree_.File("stale", "left\n").c_str(), stale.c_str()), 0);
  struct timespec hour_ago[2] = {{::time(nullptr) - 3600, 0}, {::time(nullptr) - 3600, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, stale.c_str(), hour_ago, AT_SYMLINK_NOFOLLOW), 0);
  ASSERT_EQ(::rename(tree_.File("fresh", "running\n").c_str(), fresh.c_str()), 0);
  Prime();
  EXPECT_FALSE(TestTree::Exists(stale)) << "a killed run's file was left for good";
  EXPECT_EQ(TestTree::Read(fresh), "running\n") << "a file a running save may still rename was removed";
  EXPECT_TRUE(TestTree::Exists(CacheFile()));
}

// A cache file that is not exactly what corral wrote holds nothing: the walk
// lists live and masks the same.
TEST_F(ListingCacheTest, ATamperedOrForeignCacheIsIgnored) {
  Prime();
  const std::string good = TestTree::Read(CacheFile());
  auto expect_ignored = [&](const std::string& what) {
    CountingCache cache(state_);
    EXPECT_EQ(Walk(&cache, Later()), std::vector<std::string>{"etc/a/secret"}) << what;
    EXPECT_EQ(cache.hits, 0) << what;
  };
  auto write = [&](const std::string& text) {
    ::unlink(CacheFile().c_str());
    std::ofstream(CacheFile()) << text;
    ASSERT_EQ(::chmod(CacheFile().c_str(), 0600), 0);
  };

  std::string flipped = good;
  flipped[flipped.find("secret")] = 'S';  // a name changed, the digest not
  write(flipped);
  expect_ignored("a changed byte");
  write(good.substr(0, good.size() / 2));
  expect_ignored("a truncated file");
  write(good);
  ASSERT_EQ(::chmod(CacheFile().c_str(), 0644), 0);
  expect_ignored("a file others may read");
  if (::geteuid() == 0) {
    write(good);
    ASSERT_EQ(::chown(CacheFile().c_str(), kNobody, kNobody), 0);
    expect_ignored("a file another user owns");
  }
  write(good);
  const std::string aside = tree_.File("aside", good);
  ASSERT_EQ(::chmod(aside.c_str(), 0600), 0);
  ::unlink(CacheFile().c_str());
  ASSERT_EQ(::symlink(aside.c_str(), CacheFile().c_str()), 0);
  expect_ignored("a symlink to a good copy");
}

// A listing is parsed only when a reader finds it, but the whole file is
// checked when it is read: a signed file with one bad record anywhere (a
// key that is not exactly five numbers, a name with a slash) holds nothing,
// also for a reader that never looks at that record.
TEST_F(ListingCacheTest, ASignedCacheWithOneBadRecordHoldsNothing) {
  struct stat st;
  ASSERT_EQ(::stat(etc_.c_str(), &st), 0);
  const DirectoryKey key = KeyOf(st);
  const std::string key_text = std::to_string(key.dev) + " " + std::to_string(key.ino) + " " +
                               std::to_string(key.ctime_sec) + " " + std::to_string(key.ctime_nsec);
  const std::string good_path = std::string("path") + '\0' + etc_ + '\0' + key_text + " 2" + '\0' + "a" + '\0' +
                                "b" + '\0';
  auto write_signed = [&](const std::string& records) {
    std::string text = "corral-listings 1\n" + records;
    text += Sha256Hex(text);
    text += '\n';
    ::unlink(CacheFile().c_str());
    std::ofstream(CacheFile()) << text;
    ASSERT_EQ(::chmod(CacheFile().c_str(), 0600), 0);
  };
  auto found = [&] {
    StateListingCache cache(state_);
    const std::vector<std::string>* names = cache.Find(ListingOf::kSearchPath, etc_, key);
    return names != nullptr ? *names : std::vector<std::string>{"<none>"};
  };
  write_signed(good_path);
  ASSERT_EQ(found(), (std::vector<std::string>{"a", "b"})) << "the well-formed file is not read";
  auto walk = [](const std::string& key_field, const std::string& name) {
    return std::string("walk") + '\0' + "/elsewhere" + '\0' + key_field + '\0' + name + '\0';
  };
  for (const auto& [bad, what] : std::vector<std::pair<std::string, std::string>>{
           {walk("1 2 3 4 1", "x/y"), "a name with a slash"},
           {walk("1 2 3 4 1", ".."), "a name that climbs"},
           {walk("1 2 3 4 1 ", "x"), "a key with a trailing space"},
           {walk("+1 2 3 4 1", "x"), "a key with a sign"},
           {walk("1 2 3 4", "x"), "a key of four numbers"},
           {walk("1 2 3 4 2", "x"), "more names counted than held"},
       }) {
    write_signed(bad + good_path);
    EXPECT_EQ(found(), std::vector<std::string>{"<none>"}) << what << " before the good record";
    write_signed(good_path + bad);
    EXPECT_EQ(found(), std::vector<std::string>{"<none>"}) << what << " after the good record";
  }
}

// The PATH comparison runs beside the spawn (cli/run.cc): one cache used
// by both readers from two threads at once keeps each reader's listings.
TEST_F(ListingCacheTest, TwoThreadsUseOneCacheAtOnce) {
  StateListingCache cache(state_);
  constexpr int kDirs = 300;
  auto use = [&](ListingOf of) {
    for (int i = 0; i < kDirs; ++i) {
      const std::string dir = "/dir" + std::to_string(i);
      const DirectoryKey key{1, static_cast<uint64_t>(i), 2, 3};
      cache.Remember(of, dir, key, {"n" + std::to_string(i)});
      const std::vector<std::string>* names = cache.Find(of, dir, key);
      ASSERT_NE(names, nullptr);
      ASSERT_EQ(*names, std::vector<std::string>{"n" + std::to_string(i)});
    }
  };
  std::thread other(use, ListingOf::kRootOnlyWalk);
  use(ListingOf::kSearchPath);
  other.join();
  cache.Save();
  StateListingCache again(state_);
  for (ListingOf of : {ListingOf::kRootOnlyWalk, ListingOf::kSearchPath}) {
    for (int i = 0; i < kDirs; ++i) {
      EXPECT_NE(again.Find(of, "/dir" + std::to_string(i), DirectoryKey{1, static_cast<uint64_t>(i), 2, 3}), nullptr);
    }
  }
}

// Real runs save at once from processes of their own: six processes, each
// saving its own listings ten times, released together, while this process
// reads the cache over and over. Every read that finds the file finds one
// process's save whole (signed, parsed: all of that one's listings, none of
// another's); so does the read after; and no temporary is left beside it.
TEST_F(ListingCacheTest, ProcessesSavingAtOnceLeaveOneWholeCacheForEveryReader) {
  constexpr int kProcesses = 6, kSaves = 10, kDirs = 40;
  auto dir_of = [](int process, int i) { return "/p" + std::to_string(process) + "/d" + std::to_string(i); };
  auto key_of = [](int process, int i) {
    return DirectoryKey{1, static_cast<uint64_t>(process * 1000 + i), 2, 3};
  };
  // How many processes' listings a fresh read finds whole, and in part.
  auto read = [&](int* whole, int* partial) {
    StateListingCache again(state_);
    *whole = *partial = 0;
    for (int process = 0; process < kProcesses; ++process) {
      int found = 0;
      for (int i = 0; i < kDirs; ++i) {
        found += again.Find(ListingOf::kSearchPath, dir_of(process, i), key_of(process, i)) != nullptr;
      }
      *whole += found == kDirs;
      *partial += found > 0 && found < kDirs;
    }
  };
  int go[2];
  ASSERT_EQ(::pipe(go), 0);
  std::vector<pid_t> children;
  for (int process = 0; process < kProcesses; ++process) {
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::close(go[1]);
      char byte;
      if (::read(go[0], &byte, 1) != 0) ::_exit(2);  // EOF is the go
      for (int save = 0; save < kSaves; ++save) {
        StateListingCache cache(state_);
        for (int i = 0; i < kDirs; ++i) {
          cache.Remember(ListingOf::kSearchPath, dir_of(process, i), key_of(process, i),
                         {"n" + std::to_string(save), "m" + std::to_string(i)});
        }
        cache.Save();
      }
      ::_exit(0);
    }
    children.push_back(pid);
  }
  ::close(go[0]);
  ::close(go[1]);
  int reads = 0;
  for (size_t left = children.size(); left > 0;) {
    struct stat st;
    if (::fstatat(state_.fd(), kListingCacheName, &st, AT_SYMLINK_NOFOLLOW) == 0) {
      int whole = 0, partial = 0;
      read(&whole, &partial);
      ++reads;
      EXPECT_EQ(whole, 1) << "read " << reads << " found no one process's save whole";
      EXPECT_EQ(partial, 0) << "read " << reads;
      if (whole != 1 || partial != 0) break;
    }
    for (pid_t& pid : children) {
      int status = -1;
      if (pid > 0 && ::waitpid(pid, &status, WNOHANG) == pid) {
        EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        pid = 0;
        --left;
      }
    }
  }
  for (pid_t pid : children) {
    if (pid > 0) ::waitpid(pid, nullptr, 0);
  }
  int whole = 0, partial = 0;
  read(&whole, &partial);
  EXPECT_EQ(whole, 1) << "the file is one process's save";
  EXPECT_EQ(partial, 0);
  int state_fd = ::open(state_.path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(state_fd, 0);
  std::vector<std::string> names = DirectoryNames(state_fd);
  ::close(state_fd);
  for (const std::string& name : names) {
    EXPECT_EQ(name.find(std::string(kListingCacheName) + ".new-"), std::string::npos) << name << " was left";
  }
}

// Even a well-formed cache whose listing of a directory lacks a
// subdirectory (so its secret would go unmasked) is not used where the link
// count shows the missing directory.
TEST_F(ListingCacheTest, AListingMissingASubdirectoryIsNotUsed) {
  struct stat st;
  ASSERT_EQ(::stat(etc_.c_str(), &st), 0);
  ASSERT_GE(st.st_nlink, 2u) << "the test tree's filesystem must count subdirectories";
  std::string text = "corral-listings 1\n";
  text += std::string("walk") + '\0' + etc_ + '\0' + std::to_string(st.st_dev) + " " + std::to_string(st.st_ino) + " " +
          std::to_string(st.st_ctim.tv_sec) + " " + std::to_string(st.st_ctim.tv_nsec) + " 1" + '\0' + "b" + '\0';
  text += Sha256Hex(text) + "\n";
  std::ofstream(CacheFile()) << text;
  ASSERT_EQ(::chmod(CacheFile().c_str(), 0600), 0);
  CountingCache cache(state_);
  EXPECT_EQ(Walk(&cache, Later()), std::vector<std::string>{"etc/a/secret"});
}

}  // namespace
}  // namespace corral
