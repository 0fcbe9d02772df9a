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

TEST(GitConfigStage, AConfigTheStrictReaderRefusesIsNotEdited) {
  EXPECT_FALSE(ApplyGitConfigChanges("[core]\n\tbare = \\\n false\n", {{"user", "", "name", {{"bob"}}}}).ok());
}

}  // namespace
}  // namespace corral
