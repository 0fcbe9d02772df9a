// The text edit a landing makes to the real config: a key changed in place,
// one removed, one added in a new section, values quoted as git reads them.
#include "repair/git_config_stage.h"

#include <gtest/gtest.h>

#include "policy/git_config_check.h"

namespace corral {
namespace {

constexpr char kBase[] =
    "# the user's comment\n[core]\n\trepositoryformatversion = 0\n\tbare = false\n[user]\n\tname = alice ; hers\n";

std::string Applied(const std::vector<GitConfigChange>& changes) {
  Result<std::string> out = ApplyGitConfigChanges(kBase, changes);
  EXPECT_TRUE(out.ok());
  return out.ok() ? *out : "";
}

TEST(GitConfigStage, AChangedValueIsRewrittenInPlaceKeepingEverythingElse) {
  EXPECT_EQ(Applied({{"user", "", "name", {{"bob"}}}}),
            "# the user's comment\n[core]\n\trepositoryformatversion = 0\n\tbare = false\n[user]\n\tname = bob\n");
}

TEST(GitConfigStage, ARemovedKeyLosesItsLinesAndANewOneGetsItsOwnSection) {
  EXPECT_EQ(Applied({{"user", "", "name", {}},
                     {"remote", "origin", "url", {{"https://example.com/x.git"}}},
                     {"remote", "origin", "fetch", {{"+refs/heads/*:refs/remotes/origin/*"}}}}),
            "# the user's comment\n[core]\n\trepositoryformatversion = 0\n\tbare = false\n[user]\n"
            "[remote \"origin\"]\n\turl = https://example.com/x.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n");
}

TEST(GitConfigStage, ValuesAndSubsectionsAreQuotedSoTheStrictReaderReadsThemBack) {
  std::vector<GitConfigChange> changes = {
      {"user", "", "name", {{" a \"b\" ; c\\d\te "}}},
      {"branch", "we\"ird", "description", {{"line1\nline2"}, {"", true}}},
  };
  Result<std::string> out = ApplyGitConfigChanges(kBase, changes);
  ASSERT_TRUE(out.ok());
  Result<std::vector<GitConfigEntry>> entries = ParseGitConfig(*out);
  ASSERT_TRUE(entries.ok()) << *out;
  std::vector<std::string> seen;
  for (const GitConfigEntry& entry : *entries) {
    seen.push_back(entry.Name() + "=" + entry.value + (entry.bare ? "(bare)" : ""));
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"core.repositoryformatversion=0", "core.bare=false",
                                            "user.name= a \"b\" ; c\\d\te ", "branch.we\"ird.description=line1\nline2",
                                            "branch.we\"ird.description=(bare)"}))
      << *out;
}

// Any value made of git's awkward characters reads back as it was written.
TEST(GitConfigStage, RandomValuesReadBackExactly) {
  const std::string alphabet = "ab ;#\"\\\n\t\b=[]x";
  uint32_t state = 12345;
  auto next = [&state] { return state = state * 1103515245u + 12345u; };
  for (int round = 0; round < 2000; ++round) {
    std::vector<GitConfigValue> values;
    for (uint32_t count = next() % 3 + 1, i = 0; i < count; ++i) {
      std::string value;
      for (uint32_t length = next() % 8, j = 0; j < length; ++j) value += alphabet[(next() >> 8) % alphabet.size()];
      values.push_back({value, value.empty() && next() % 2 == 0});
    }
    std::string subsection = round % 2 == 0 ? "" : values[0].value;
    if (subsection.find_first_of("\n\b\t") != std::string::npos) subsection.clear();
    Result<std::string> out = ApplyGitConfigChanges(kBase, {{"branch", subsection, "description", values}});
    ASSERT_TRUE(out.ok());
    Result<std::vector<GitConfigEntry>> entries = ParseGitConfig(*out);
    ASSERT_TRUE(entries.ok()) << *out;
    std::vector<GitConfigValue> seen;
    for (const GitConfigEntry& entry : *entries) {
      if (entry.section == "branch") {
        EXPECT_EQ(entry.subsection, subsection);
        seen.push_back({entry.value, entry.bare});
      }
    }
    EXPECT_EQ(seen, values) << *out;
  }
}

TEST(GitConfigStage, AConfigTheStrictReaderRefusesIsNotEdited) {
  EXPECT_FALSE(ApplyGitConfigChanges("[core]\n\tbare = \\\n false\n", {{"user", "", "name", {{"bob"}}}}).ok());
}

}  // namespace
}  // namespace corral
