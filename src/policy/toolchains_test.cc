// The toolchain table on a fake home (where each one lies, which variables
// move it, which secret files it hides), and the PATH comparison's lines.
#include "policy/toolchains.h"

#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <utility>

#include "policy/listing_cache.h"
#include "policy/policy.h"
#include "policy/search_path.h"
#include "testing/test_scratch_dir.h"

namespace corral {
namespace {

using ::corral::testing::TestTree;

class ToolchainsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    host_.home = tree_.Dir("home");
    host_.cwd = tree_.Dir("ws");
    host_.uid = ::getuid();
    host_.gid = ::getgid();
  }
  std::string Program(const std::string& relative) {
    std::string path = tree_.File(relative, "#!/bin/sh\n");
    ::chmod(path.c_str(), 0755);
    return path;
  }
  TestTree tree_;
  HostContext host_;
};

TEST_F(ToolchainsTest, ANameIsItsExistingDirectories) {
  tree_.Dir("home/.cargo/bin");
  const Toolchain* rustup = FindToolchain("rustup");
  ASSERT_NE(rustup, nullptr);
  EXPECT_EQ(LayOut(*rustup, host_).dirs, std::vector<std::string>{tree_.Join("home/.cargo")});
  tree_.Dir("home/.rustup");
  EXPECT_EQ(LayOut(*rustup, host_).dirs,
            (std::vector<std::string>{tree_.Join("home/.cargo"), tree_.Join("home/.rustup")}));
  EXPECT_EQ(FindToolchain("cargo"), nullptr);
}

TEST_F(ToolchainsTest, AVariableMovesADirectoryOnlyInsideTheHome) {
  tree_.Dir("home/.local/share/cargo");
  tree_.Dir("opt/cargo");
  const Toolchain& rustup = *FindToolchain("rustup");
  host_.toolchain_env["CARGO_HOME"] = tree_.Join("home/.local/share/cargo");
  EXPECT_EQ(LayOut(rustup, host_).dirs, std::vector<std::string>{tree_.Join("home/.local/share/cargo")});
  host_.toolchain_env["CARGO_HOME"] = tree_.Join("opt/cargo");  // outside: the default, which does not exist
  EXPECT_TRUE(LayOut(rustup, host_).dirs.empty());
  host_.toolchain_env["CARGO_HOME"] = host_.home;  // the whole home is no toolchain
  EXPECT_TRUE(LayOut(rustup, host_).dirs.empty());
  host_.toolchain_env.clear();
  host_.toolchain_env["GOPATH"] = tree_.Join("home/gopath") + ":" + tree_.Join("home/other");
  tree_.Dir("home/gopath");
  EXPECT_EQ(LayOut(*FindToolchain("go"), host_).dirs, std::vector<std::string>{tree_.Join("home/gopath")});
}

TEST_F(ToolchainsTest, SecretFilesAreFoundInEveryInstalledVersion) {
  tree_.File("home/.nvm/versions/node/v18.0.0/etc/npmrc", "token");
  tree_.File("home/.nvm/versions/node/v20.1.0/etc/npmrc", "token");
  tree_.Dir("home/.nvm/versions/node/v21.0.0/etc");
  tree_.File("home/.cargo/credentials.toml", "token");
  EXPECT_EQ(LayOut(*FindToolchain("nvm"), host_).secrets,
            (std::vector<std::string>{tree_.Join("home/.nvm/versions/node/v18.0.0/etc/npmrc"),
                                      tree_.Join("home/.nvm/versions/node/v20.1.0/etc/npmrc")}));
  EXPECT_EQ(LayOut(*FindToolchain("rustup"), host_).secrets,
            std::vector<std::string>{tree_.Join("home/.cargo/credentials.toml")});
}

TEST_F(ToolchainsTest, SecretsBehindLinksAndDotNamesAreFound) {
  tree_.File("home/.pyenv/versions/3.11.4/envs/venv/pip.conf", "token");
  tree_.Symlink("home/.pyenv/versions/venv", tree_.Join("home/.pyenv/versions/3.11.4/envs/venv"));
  tree_.File("home/.pyenv/versions/.old/pip.conf", "token");
  std::vector<std::string> secrets = LayOut(*FindToolchain("pyenv"), host_).secrets;
  auto has = [&](const std::string& path) { return std::find(secrets.begin(), secrets.end(), path) != secrets.end(); };
  EXPECT_TRUE(has(tree_.Join("home/.pyenv/versions/venv/pip.conf")));
  EXPECT_TRUE(has(tree_.Join("home/.pyenv/versions/.old/pip.conf")));
  EXPECT_TRUE(has(tree_.Join("home/.pyenv/versions/3.11.4/envs/venv/pip.conf")));
}

TEST_F(ToolchainsTest, ADirectoryThatLeadsOutOfTheHomeOrToItIsNoToolchain) {
  tree_.Symlink("home/.cargo", host_.home);
  tree_.Dir("elsewhere/rustup");
  tree_.Symlink("home/.rustup", tree_.Join("elsewhere/rustup"));
  EXPECT_TRUE(LayOut(*FindToolchain("rustup"), host_).dirs.empty());
  EXPECT_FALSE(PolicyBuilder(host_).AllowToolchain("rustup").Build().ok());
}

TEST_F(ToolchainsTest, AutoIsTheToolchainsHoldingAPathEntry) {
  tree_.Dir("home/.pyenv/shims");
  tree_.Dir("home/.cargo/bin");
  tree_.Dir("home/.nvm");  // installed, but not on PATH
  host_.path_env = tree_.Join("home/.cargo/bin") + "::relative:" + tree_.Join("home/.pyenv/shims") + ":/usr/bin";
  Result<std::vector<const Toolchain*>> chosen = ResolveToolchains({"auto"}, host_);
  ASSERT_TRUE(chosen.ok()) << chosen.error().ToString();
  ASSERT_EQ(chosen->size(), 2u);
  EXPECT_EQ((*chosen)[0]->name, "rustup");
  EXPECT_EQ((*chosen)[1]->name, "pyenv");
  Result<std::vector<const Toolchain*>> both = ResolveToolchains({"pyenv", "auto", "pyenv"}, host_);
  ASSERT_TRUE(both.ok());
  EXPECT_EQ(both->size(), 2u) << "each once";
}

TEST_F(ToolchainsTest, AnUnknownNameIsOneUsageErrorListingTheNames) {
  Result<std::vector<const Toolchain*>> chosen = ResolveToolchains({"rustc"}, host_);
  ASSERT_FALSE(chosen.ok());
  EXPECT_EQ(chosen.error().kind(), ErrorKind::kUsage);
  EXPECT_EQ(chosen.error().message(),
            "--allow-toolchain rustc: not a toolchain corral knows; the names are rustup, pyenv, nvm, volta, fnm, "
            "go, sdkman, asdf, mise, deno, bun, local-bin, or auto");
}

TEST_F(ToolchainsTest, AGrantedToolchainHidesItsSecretsAndAMissingOneIsRefused) {
  tree_.File("home/.nvm/versions/node/v20.1.0/etc/npmrc", "token");
  Result<Policy> policy = PolicyBuilder(host_).AllowToolchain("nvm").Build();
  ASSERT_TRUE(policy.ok()) << policy.error().ToString();
  const PathGrant* grant = policy->GrantFor(tree_.Join("home/.nvm/versions"));
  ASSERT_NE(grant, nullptr);
  EXPECT_EQ(grant->origin, GrantOrigin::kToolchain);
  EXPECT_EQ(grant->access, Access::kRead | Access::kExec);
  bool hidden = false;
  for (const MaskedPath& mask : policy->masks()) hidden |= mask.path == tree_.Join("home/.nvm/versions/node/v20.1.0/etc/npmrc");
  EXPECT_TRUE(hidden);
  Result<Policy> missing = PolicyBuilder(host_).AllowToolchain("volta").Build();
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().kind(), ErrorKind::kUsage);
  EXPECT_NE(missing.error().message().find("--allow-toolchain volta: it is not installed here"), std::string::npos);
}

TEST(SearchPathTest, SplitKeepsEmptyEntriesInOrder) {
  EXPECT_EQ(SplitSearchPath(""), std::vector<std::string>{});
  EXPECT_EQ(SplitSearchPath("/a::b:"), (std::vector<std::string>{"/a", "", "b", ""}));
}

TEST_F(ToolchainsTest, ComparePathNamesTheProgramThatRunsElsewhere) {
  Program("home/.pyenv/shims/sh");
  Program("home/.cargo/bin/cargo");
  tree_.Dir("home/.rustup");
  host_.path_env = tree_.Join("home/.pyenv/shims") + ":" + tree_.Join("home/.cargo/bin") + ":/usr/bin:/bin";
  Result<Policy> policy = PolicyBuilder(host_).Build();
  ASSERT_TRUE(policy.ok()) << policy.error().ToString();
  PathComparison shadowed = ComparePath(*policy, "sh");
  ASSERT_TRUE(shadowed.warning);
  EXPECT_EQ(*shadowed.warning,
            "sh is ~/.pyenv/shims/sh outside but /usr/bin/sh inside; --allow-toolchain pyenv would fix it");
  EXPECT_EQ(shadowed.hidden, (std::vector<std::string>{"~/.pyenv/shims (--allow-toolchain pyenv)",
                                                       "~/.cargo/bin (--allow-toolchain rustup)"}));
  PathComparison cargo = ComparePath(*policy, "cargo");
  ASSERT_TRUE(cargo.warning);
  EXPECT_EQ(*cargo.warning, "cargo is ~/.cargo/bin/cargo outside but not found inside; --allow-toolchain rustup would fix it");
  // Another program: the names the hidden entries shadow.
  PathComparison other = ComparePath(*policy, "true");
  ASSERT_TRUE(other.warning);
  EXPECT_EQ(*other.warning, "sh resolves to another program inside: ~/.pyenv/shims is not visible there; "
                            "--allow-toolchain pyenv would fix it");

  Result<Policy> half = PolicyBuilder(host_).AllowExec(tree_.Join("home/.cargo")).Build();
  ASSERT_TRUE(half.ok()) << half.error().ToString();
  PathComparison partial = ComparePath(*half, "cargo");
  ASSERT_TRUE(partial.warning);
  EXPECT_EQ(*partial.warning, "cargo is from the rustup toolchain, but ~/.rustup is not visible inside; "
                              "--allow-toolchain rustup would fix it");

  Result<Policy> granted = PolicyBuilder(host_).AllowToolchain("auto").Build();
  ASSERT_TRUE(granted.ok()) << granted.error().ToString();
  EXPECT_FALSE(ComparePath(*granted, "cargo").warning);
  EXPECT_FALSE(ComparePath(*granted, "sh").warning);
  EXPECT_TRUE(ComparePath(*granted, "sh").hidden.empty());
}

TEST_F(ToolchainsTest, ComparePathIsQuietForTheSystemsPathAndOutsideAnyToolchain) {
  host_.path_env = "/usr/local/bin:/usr/bin:/bin";
  Result<Policy> policy = PolicyBuilder(host_).Build();
  ASSERT_TRUE(policy.ok()) << policy.error().ToString();
  PathComparison compared = ComparePath(*policy, "sh");
  EXPECT_FALSE(compared.warning);
  EXPECT_TRUE(compared.hidden.empty());
  // An entry outside every toolchain is named with its --allow-exec.
  Program("opt/tools/bin/mytool");
  host_.path_env = tree_.Join("opt/tools/bin") + ":/usr/bin";
  Result<Policy> opt = PolicyBuilder(host_).Build();
  ASSERT_TRUE(opt.ok());
  PathComparison tool = ComparePath(*opt, "mytool");
  ASSERT_TRUE(tool.warning);
  EXPECT_EQ(*tool.warning, "mytool is " + tree_.Join("opt/tools/bin/mytool") + " outside but not found inside; --allow-exec " +
                               tree_.Join("opt/tools/bin") + " would fix it");
}

// A listing cache in memory, as the state's keeps it: a listing is found
// only under the key it was remembered with. Counts what it spared.
class MemoryCache : public ListingCache {
 public:
  const std::vector<std::string>* Find(ListingOf of, const std::string& dir, const DirectoryKey& key) override {
    auto found = listings_.find({of, dir});
    if (found == listings_.end() || !(found->second.first == key)) return nullptr;
    ++hits;
    return &found->second.second;
  }
  void Remember(ListingOf of, const std::string& dir, const DirectoryKey& key,
                std::vector<std::string> names) override {
    listings_[{of, dir}] = {key, std::move(names)};
    ++remembered;
  }
  // Puts every listing out of order, as a cache file could hold it.
  void Reverse() {
    for (auto& [where, listing] : listings_) std::reverse(listing.second.begin(), listing.second.end());
  }
  int hits = 0;
  int remembered = 0;

 private:
  std::map<std::pair<ListingOf, std::string>, std::pair<DirectoryKey, std::vector<std::string>>> listings_;
};

struct timespec HourFromNow() {
  struct timespec now = {};
  ::clock_gettime(CLOCK_REALTIME, &now);
  now.tv_sec += 3600;
  return now;
}

// The PATH directories are listed through the listing cache: a second
// comparison lists none of them while they are unchanged, a name added to
// one (its ctime moves) is seen at once, and a directory changed within
// the settling time is not remembered.
TEST_F(ToolchainsTest, ComparePathListsThroughTheCacheAndSeesANewName) {
  Program("home/.pyenv/shims/tool");
  Program("ws/bin/tool");
  host_.path_env = tree_.Join("home/.pyenv/shims") + ":" + tree_.Join("ws/bin");
  Result<Policy> policy = PolicyBuilder(host_).Build();
  ASSERT_TRUE(policy.ok()) << policy.error().ToString();
  const std::string one = "tool resolves to another program inside: ~/.pyenv/shims is not visible there; "
                          "--allow-toolchain pyenv would fix it";
  MemoryCache cache;
  ScopedListingCache use(&cache);
  {
    MemoryCache fresh;
    ScopedListingCache just_changed(&fresh);
    EXPECT_EQ(ComparePath(*policy, "true").warning, one);
    EXPECT_EQ(fresh.remembered, 0) << "a directory changed within the settling time was remembered";
  }
  EXPECT_EQ(ComparePath(*policy, "true", HourFromNow()).warning, one);
  EXPECT_EQ(cache.remembered, 2);
  EXPECT_EQ(cache.hits, 0);
  EXPECT_EQ(ComparePath(*policy, "true", HourFromNow()).warning, one);
  EXPECT_EQ(cache.hits, 2) << "an unchanged directory was listed again";
  EXPECT_EQ(cache.remembered, 2);
  // Reversed, a binary search of these would miss "tool".
  for (const char* name : {"ws/bin/aaa", "ws/bin/bbb", "ws/bin/ccc"}) Program(name);
  EXPECT_EQ(ComparePath(*policy, "true", HourFromNow()).warning, one);
  cache.Reverse();
  EXPECT_EQ(ComparePath(*policy, "true", HourFromNow()).warning, one) << "a listing out of order was searched as it was";
  EXPECT_EQ(cache.hits, 5);

  Program("home/.pyenv/shims/other");
  Program("ws/bin/other");
  EXPECT_EQ(ComparePath(*policy, "true", HourFromNow()).warning,
            "other, tool resolve to another program inside: ~/.pyenv/shims is not visible there; "
            "--allow-toolchain pyenv would fix it");
  EXPECT_EQ(cache.hits, 5) << "a changed directory's old listing was used";
}

// The comparison's listing is bounded (PathComparisonLimits::listed): no
// directory is read past the budget in all, and once it is spent no
// further directory is listed; one left unlisted is asked name by name, so
// what it holds is still seen. Here, with a budget of 100 names, the
// hidden entry and two directories are listed (81 names); the third would
// pass the budget, and the fourth comes after it.
TEST_F(ToolchainsTest, ComparePathListsNoFurtherDirectoryPastItsBudget) {
  Program("home/.pyenv/shims/tool");
  std::string path_env = tree_.Join("home/.pyenv/shims");
  for (const char* dir : {"ws/a", "ws/b", "ws/c"}) {
    for (int i = 0; i < 40; ++i) tree_.File(std::string(dir) + "/n" + std::to_string(i));
    path_env += ":" + tree_.Join(dir);
  }
  Program("ws/d/tool");
  path_env += ":" + tree_.Join("ws/d");
  host_.path_env = path_env;
  Result<Policy> policy = PolicyBuilder(host_).Build();
  ASSERT_TRUE(policy.ok()) << policy.error().ToString();
  MemoryCache cache;
  ScopedListingCache use(&cache);
  EXPECT_EQ(ComparePath(*policy, "true", HourFromNow(), PathComparisonLimits{.listed = 100}).warning,
            "tool resolves to another program inside: ~/.pyenv/shims is not visible there; "
            "--allow-toolchain pyenv would fix it");
  EXPECT_EQ(cache.remembered, 3) << "a directory was read past the budget (or one within it was not)";
}

}  // namespace
}  // namespace corral
