// forbid_read: pattern normalisation, the segment-wise glob matcher, and
// the expansion to masks on a temporary tree (relative patterns per user
// root, globs walked within grants, symlinks hiding their targets, the walk
// budget failing closed).
#include "policy/forbid.h"

#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>

#include "testing/test_scratch_dir.h"
#include "policy/forbid_walk.h"
#include "policy/path.h"

namespace corral {
namespace {

using ::corral::testing::TestTree;

TEST(ForbidPattern, NormalisationExpandsHomeAndRefusesDotDot) {
  EXPECT_EQ(*NormalizeForbidPattern("~/.ssh", "/home/ana"), "/home/ana/.ssh");
  EXPECT_EQ(*NormalizeForbidPattern("~", "/home/ana"), "/home/ana");
  EXPECT_EQ(*NormalizeForbidPattern("/srv//data/", "/home/ana"), "/srv/data");
  EXPECT_EQ(*NormalizeForbidPattern("**/.env", "/home/ana"), "**/.env");
  EXPECT_FALSE(NormalizeForbidPattern("", "/home/ana").ok());
  for (const char* bad : {"../x", "/srv/../etc/shadow", "a/..", "~/../other", ".", "./", "./."}) {
    Result<std::string> normalized = NormalizeForbidPattern(bad, "/home/ana");
    ASSERT_FALSE(normalized.ok()) << bad;
    EXPECT_EQ(normalized.error().kind(), ErrorKind::kUsage) << bad;
  }
}

// A "." segment names the directory it is in: dropped, so "./.env" hides
// .env (it used to hide nothing: no listed name is ".").
TEST(ForbidPattern, DotSegmentsAreDropped) {
  EXPECT_EQ(*NormalizeForbidPattern("./.env", "/home/ana"), ".env");
  EXPECT_EQ(*NormalizeForbidPattern("conf/./key.pem", "/home/ana"), "conf/key.pem");
  EXPECT_EQ(*NormalizeForbidPattern(".env/.", "/home/ana"), ".env");
  EXPECT_EQ(*NormalizeForbidPattern("/srv/./data", "/home/ana"), "/srv/data");
  EXPECT_TRUE(MatchesForbidPattern("/ws/" + *NormalizeForbidPattern("./.env", "/h"), "/ws/.env"));
}

// A home, workspace or store whose name holds a wildcard character goes
// into a pattern quoted: it matches itself and nothing else. A backslash
// is a character like any other (no escapes).
TEST(ForbidPattern, QuotedPathsMatchOnlyThemselves) {
  EXPECT_EQ(QuoteLiteral("/home/a[1]/x*?"), "/home/a[[]1]/x[*][?]");
  EXPECT_EQ(*NormalizeForbidPattern("~/.ssh", "/home/a[1]"), "/home/a[[]1]/.ssh");
  EXPECT_TRUE(MatchesForbidPattern(*NormalizeForbidPattern("~/.ssh", "/home/a[1]"), "/home/a[1]/.ssh"));
  EXPECT_FALSE(MatchesForbidPattern(*NormalizeForbidPattern("~/.ssh", "/home/a[1]"), "/home/a1/.ssh"));
  for (const char* path : {"/ws/p[1]/.env", "/ws/p*/.env", "/ws/p?/.env", "/ws/a\\b", "/ws/[!x]", "/ws/]"}) {
    const std::string quoted = QuoteLiteral(path);
    EXPECT_TRUE(MatchesForbidPattern(quoted, path)) << quoted;
    EXPECT_EQ(LiteralOf(quoted), std::optional<std::string>(path)) << quoted;
  }
  EXPECT_FALSE(MatchesForbidPattern(QuoteLiteral("/ws/p*"), "/ws/px"));
  EXPECT_TRUE(MatchesForbidPattern("/ws/a\\b", "/ws/a\\b"));
  EXPECT_FALSE(MatchesForbidPattern("/ws/a\\b", "/ws/ab"));
  for (const char* glob : {"/ws/*", "/ws/?", "/ws/[ab]", "/ws/[!a]", "/ws/[^a]", "/ws/[]]", "/ws/[a-c]", "/ws/["}) {
    EXPECT_EQ(LiteralOf(glob), std::nullopt) << glob;
  }
}

TEST(ForbidPattern, MatchTable) {
  struct Case {
    const char* pattern;
    const char* path;
    bool matches;
  };
  const Case cases[] = {
      {"/ws/.env", "/ws/.env", true},
      {"/ws/.env", "/ws/.env.example", false},
      {"/ws/.env", "/ws", false},
      {"/ws/**/.env", "/ws/.env", true},  // ** spans zero segments
      {"/ws/**/.env", "/ws/a/b/c/.env", true},
      {"/ws/**/.env", "/other/.env", false},
      {"/ws/**", "/ws", true},
      {"/ws/**", "/ws/a/b", true},
      {"/ws/*.pem", "/ws/key.pem", true},
      {"/ws/*.pem", "/ws/.hidden.pem", true},  // globs match dot files too
      {"/ws/*.pem", "/ws/sub/key.pem", false},  // * stays within one segment
      {"/ws/key?.pem", "/ws/key1.pem", true},
      {"/ws/key[0-9].pem", "/ws/keyA.pem", false},
      {"/ws/**/secrets/*", "/ws/a/secrets/x", true},
      {"/ws/**/secrets/*", "/ws/a/secrets", false},
      {"/**/**/**/x", "/x", true},
      {"/**/a/**/b", "/a/b", true},
      {"/**/a/**/b", "/b/a", false},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(MatchesForbidPattern(c.pattern, c.path), c.matches) << c.pattern << " vs " << c.path;
  }
}

// Backtracking would take exponential time here; the matcher must not.
TEST(ForbidPattern, ManyDoubleStarsStayCheap) {
  std::string pattern, path;
  for (int i = 0; i < 40; ++i) pattern += "/**/a";
  pattern += "/b";
  for (int i = 0; i < 200; ++i) path += "/a";
  EXPECT_FALSE(MatchesForbidPattern(pattern, path));
  EXPECT_TRUE(MatchesForbidPattern(pattern, path + "/b"));
}

// BelowMatcher's shortcut for literal patterns decides exactly as the
// matcher: every pattern alone and all of them together, against every
// directory here (the patterns' own prefixes, their siblings, "/").
TEST(ForbidPattern, BelowMatcherDecidesAsTheMatcher) {
  const std::vector<std::string> patterns = {
      "/home/a/.ssh", "/home/a/.config/gcloud", "/home/a/.ssh/", "/home/a/x\\y", "/home/a/.aws", "/home/p[[]1]/x",
      "/home/p[[]1]", "/home/p[1]/y", "/home/a/[!.]ssh",
      "/home/*/.ssh", "/home/a/**/.env", "/**/.env", "/home/a/.conf?g/gh", "/home/a/[.]aws", "/", "/home",
      "/srv/ws/keys", "/srv/**"};
  const std::vector<std::string> dirs = {"/", "/home", "/home/a", "/home/a/.ssh", "/home/a/.config",
                                         "/home/a/.config/gcloud", "/home/ab", "/home/b", "/srv", "/srv/ws",
                                         "/srv/ws/keys", "/srv/ws/keys/deeper", "/home/a/x\\y", "/home/a/xy",
                                         "/usr", "/home/a/.aws/sub", "/home/p[1]", "/home/p1", "/home/p[1]/x"};
  std::vector<PatternSegments> sets;
  PatternSegments all;
  for (const std::string& pattern : patterns) {
    sets.push_back({PathSegments(pattern)});
    all.push_back(PathSegments(pattern));
  }
  sets.push_back(all);
  for (const PatternSegments& set : sets) {
    const BelowMatcher below(set);
    for (const std::string& dir : dirs) {
      EXPECT_EQ(below.MayMatchBelow(dir), ProgressOf(set, dir).MayMatchBelow())
          << dir << " against " << (set.size() == 1 ? "one pattern" : "all") << " (" << set.front().size()
          << " segments first)";
    }
  }
}

std::set<std::string> Paths(const std::vector<MaskedPath>& masks) {
  std::set<std::string> paths;
  for (const MaskedPath& mask : masks) paths.insert(mask.path + (mask.is_dir ? "/" : ""));
  return paths;
}

class ForbidExpand : public ::testing::Test {
 protected:
  ForbidExpand() {
    tree_.File("ws/.env", "x");
    tree_.File("ws/app/.env", "x");
    tree_.File("ws/app/main.c", "x");
    tree_.Dir("ws/keys");
    tree_.File("ws/keys/id.pem", "x");
    tree_.File("data/.env", "x");
    tree_.File("outside/.env", "x");
    tree_.File("home/.ssh/id_ed25519", "x");
  }
  ForbidScope Scope() const {
    ForbidScope scope;
    scope.user_roots = {tree_.Join("ws"), tree_.Join("data")};
    scope.visible_roots = {tree_.Join("ws"), tree_.Join("data"), tree_.Join("home")};
    return scope;
  }
  Result<ForbidExpansion> Expand(const std::vector<std::string>& patterns) const {
    return ExpandForbidden(patterns, tree_.Join("home"), Scope());
  }

  TestTree tree_;
};

TEST_F(ForbidExpand, RelativeGlobAppliesUnderEveryUserRootAndOnlyInsideGrants) {
  Result<ForbidExpansion> masks = Expand({"**/.env"});
  ASSERT_TRUE(masks.ok()) << masks.error().ToString();
  EXPECT_EQ(Paths(masks->masks), (std::set<std::string>{tree_.Join("ws/.env"), tree_.Join("ws/app/.env"),
                                                  tree_.Join("data/.env")}));
}

TEST_F(ForbidExpand, AbsoluteHomeAndDirectoryPatterns) {
  Result<ForbidExpansion> masks = Expand({"~/.ssh", tree_.Join("ws/keys"), tree_.Join("outside/.env")});
  ASSERT_TRUE(masks.ok()) << masks.error().ToString();
  // outside/ is in no grant: it is invisible already and needs no mask.
  EXPECT_EQ(Paths(masks->masks), (std::set<std::string>{tree_.Join("home/.ssh/"), tree_.Join("ws/keys/")}));
}

TEST_F(ForbidExpand, AMissingPathNeedsNoMask) {
  Result<ForbidExpansion> masks = Expand({tree_.Join("ws/missing"), "**/nothing-like-this"});
  ASSERT_TRUE(masks.ok()) << masks.error().ToString();
  EXPECT_TRUE(masks->masks.empty());
}

TEST_F(ForbidExpand, AHiddenSymlinkHidesItsTargetInsideTheGrants) {
  tree_.Symlink("ws/link-to-keys", tree_.Join("ws/keys/id.pem"));
  Result<ForbidExpansion> masks = Expand({"link-to-keys"});
  ASSERT_TRUE(masks.ok()) << masks.error().ToString();
  EXPECT_EQ(Paths(masks->masks), (std::set<std::string>{tree_.Join("ws/link-to-keys"), tree_.Join("ws/keys/id.pem")}));
}

TEST_F(ForbidExpand, AWalkOverTheBudgetIsAnErrorNotAPartialMask) {
  for (int i = 0; i < 50; ++i) tree_.File("ws/many/f" + std::to_string(i), "x");
  ForbidScope scope = Scope();
  scope.walk_budget = 20;
  Result<ForbidExpansion> masks = ExpandForbidden({"**/.env"}, tree_.Join("home"), scope);
  ASSERT_FALSE(masks.ok());
  EXPECT_EQ(masks.error().kind(), ErrorKind::kPolicy);
  EXPECT_NE(masks.error().message().find("narrower"), std::string::npos) << masks.error().ToString();
}

// Every mask carries the (dev, inode) the walk saw: the child mounts it on
// that file or refuses.
TEST_F(ForbidExpand, EveryMaskIsPinnedToTheFileTheWalkSaw) {
  Result<ForbidExpansion> masks = Expand({"**/.env", "~/.ssh"});
  ASSERT_TRUE(masks.ok()) << masks.error().ToString();
  ASSERT_FALSE(masks->masks.empty());
  for (const MaskedPath& mask : masks->masks) {
    struct stat st;
    ASSERT_EQ(::lstat(mask.path.c_str(), &st), 0) << mask.path;
    EXPECT_TRUE(mask.pinned) << mask.path;
    EXPECT_EQ(mask.id, (FileIdentity{st.st_dev, st.st_ino})) << mask.path;
  }
}

// A directory the walk cannot list, where a pattern could match below, is
// hidden whole and named in a note; one no pattern reaches is left alone.
// Root reads every directory, so there the file itself is found.
TEST_F(ForbidExpand, AnUnreadableDirectoryWhereAPatternCouldMatchIsHiddenWhole) {
  tree_.File("ws/locked/.env", "x");
  tree_.File("data/closed/other", "x");
  ASSERT_EQ(::chmod(tree_.Join("ws/locked").c_str(), 0), 0);
  ASSERT_EQ(::chmod(tree_.Join("data/closed").c_str(), 0), 0);
  Result<ForbidExpansion> masks = Expand({"**/.env", tree_.Join("ws/app/main.c")});
  ASSERT_EQ(::chmod(tree_.Join("ws/locked").c_str(), 0755), 0);
  ASSERT_EQ(::chmod(tree_.Join("data/closed").c_str(), 0755), 0);
  ASSERT_TRUE(masks.ok()) << masks.error().ToString();
  std::set<std::string> expected = {tree_.Join("ws/.env"), tree_.Join("ws/app/.env"), tree_.Join("ws/app/main.c"),
                                    tree_.Join("data/.env")};
  if (::geteuid() == 0) {
    expected.insert(tree_.Join("ws/locked/.env"));
    EXPECT_TRUE(masks->notes.empty());
  } else {
    expected.insert(tree_.Join("ws/locked/"));
    expected.insert(tree_.Join("data/closed/"));  // `**/.env` could match below it too
    ASSERT_EQ(masks->notes.size(), 2u);
    EXPECT_NE(masks->notes[0].find("hidden whole"), std::string::npos) << masks->notes[0];
  }
  EXPECT_EQ(Paths(masks->masks), expected);
}

// A literal pattern walks only its own path: a locked directory beside it
// is not hidden.
TEST_F(ForbidExpand, ALiteralPatternDoesNotHideALockedSibling) {
  tree_.File("ws/locked/x", "x");
  ASSERT_EQ(::chmod(tree_.Join("ws/locked").c_str(), 0), 0);
  Result<ForbidExpansion> masks = Expand({tree_.Join("ws/app/.env")});
  ASSERT_EQ(::chmod(tree_.Join("ws/locked").c_str(), 0755), 0);
  ASSERT_TRUE(masks.ok()) << masks.error().ToString();
  EXPECT_EQ(Paths(masks->masks), (std::set<std::string>{tree_.Join("ws/app/.env")}));
  EXPECT_TRUE(masks->notes.empty());
}

TEST_F(ForbidExpand, DotDotIsRefusedBeforeAnyWalk) {
  Result<ForbidExpansion> masks = Expand({"ws/../outside/.env"});
  ASSERT_FALSE(masks.ok());
  EXPECT_EQ(masks.error().kind(), ErrorKind::kUsage);
}

}  // namespace
}  // namespace corral
