// ScrubEnvironment: only the allowlist and --allow-env names pass, HOME is the
// sandbox's, PATH has a default, the first definition wins, junk is dropped.
#include "confine/env.h"

#include <unistd.h>

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "testing/test_scratch_dir.h"

namespace corral {
namespace {

using ::corral::testing::TestTree;

class ScrubEnvironmentTest : public ::testing::Test {
 protected:
  std::vector<std::string> Scrub(std::vector<const char*> entries, std::vector<std::string> allow_env = {}) {
    PolicyBuilder builder(HostContext{tree_.Dir("ws"), tree_.Dir("home"), ::getuid(), ::getgid(), {}, {}, {}});
    builder.WithoutSystemRoots();
    for (std::string& name : allow_env) builder.AllowEnv(std::move(name));
    Result<Policy> policy = builder.Build();
    EXPECT_TRUE(policy.ok()) << policy.error().ToString();
    if (!policy.ok()) return {"policy failed"};
    entries.push_back(nullptr);
    return ScrubEnvironment(*policy, entries.data());
  }
  std::string Home() const { return "HOME=" + tree_.Join("home"); }

  TestTree tree_;
};

TEST_F(ScrubEnvironmentTest, KeepsOnlyTheAllowlistAndAllowEnvNames) {
  std::vector<std::string> env = Scrub(
      {"PATH=/usr/bin", "AWS_SECRET_ACCESS_KEY=hunter2", "TERM=xterm", "LD_PRELOAD=/tmp/evil.so", "LANG=C.UTF-8",
       "LC_ALL=C", "LC_CTYPE=C", "LC_MESSAGES=fr", "TZ=UTC", "SSH_AUTH_SOCK=/run/agent", "CARGO_HOME=/c",
       "PATHX=1", "GITHUB_TOKEN=ghp_x"},
      {"CARGO_HOME"});
  EXPECT_EQ(env, (std::vector<std::string>{"CARGO_HOME=/c", Home(), "LANG=C.UTF-8", "LC_ALL=C", "LC_CTYPE=C",
                                           "PATH=/usr/bin", "TERM=xterm", "TZ=UTC"}));
}

TEST_F(ScrubEnvironmentTest, HomeIsThePolicyHome) {
  std::vector<std::string> env = Scrub({"HOME=/root", "PATH=/bin"});
  EXPECT_EQ(env, (std::vector<std::string>{Home(), "PATH=/bin"}));
  // Not even --allow-env HOME lets the caller's value through.
  EXPECT_EQ(Scrub({"HOME=/root", "PATH=/bin"}, {"HOME"}), (std::vector<std::string>{Home(), "PATH=/bin"}));
}

TEST_F(ScrubEnvironmentTest, AddsADefaultPathWhenMissing) {
  EXPECT_EQ(Scrub({"TERM=dumb"}),
            (std::vector<std::string>{Home(), std::string("PATH=") + kDefaultPath, "TERM=dumb"}));
  EXPECT_EQ(Scrub({}), (std::vector<std::string>{Home(), std::string("PATH=") + kDefaultPath}));
  // An empty PATH is still a PATH the caller chose.
  EXPECT_EQ(Scrub({"PATH="}), (std::vector<std::string>{Home(), "PATH="}));
}

TEST_F(ScrubEnvironmentTest, FirstDefinitionWins) {
  EXPECT_EQ(Scrub({"TERM=first", "PATH=/one", "TERM=second", "PATH=/two", "TERMINFO=x"}),
            (std::vector<std::string>{Home(), "PATH=/one", "TERM=first"}));
}

TEST_F(ScrubEnvironmentTest, DropsMalformedEntries) {
  EXPECT_EQ(Scrub({"PATH", "TERM", "=value", "", "=", "LANG=C"}),
            (std::vector<std::string>{Home(), "LANG=C", std::string("PATH=") + kDefaultPath}));
}

TEST_F(ScrubEnvironmentTest, NullEnvironIsEmpty) {
  PolicyBuilder builder(HostContext{tree_.Dir("ws"), tree_.Dir("home"), ::getuid(), ::getgid(), {}, {}, {}});
  Result<Policy> policy = builder.WithoutSystemRoots().Build();
  ASSERT_TRUE(policy.ok()) << policy.error().ToString();
  EXPECT_EQ(ScrubEnvironment(*policy, nullptr),
            (std::vector<std::string>{Home(), std::string("PATH=") + kDefaultPath}));
}

TEST_F(ScrubEnvironmentTest, ValuesWithEqualsSignsAreKeptWhole) {
  EXPECT_EQ(Scrub({"TZ=a=b=c", "PATH=/bin"}), (std::vector<std::string>{Home(), "PATH=/bin", "TZ=a=b=c"}));
}

}  // namespace
}  // namespace corral
