// The safe list for a config a run wrote: git init's own config and the
// keys an agent sets every day pass; every key that names a program, and
// every line read differently than git might, does not.
#include "policy/git_config_check.h"

#include <gtest/gtest.h>

namespace corral {
namespace {

TEST(GitConfigCheck, GitInitsConfigAndEverydayKeysAreSafe) {
  EXPECT_EQ(UnsafeGitConfig("[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n"
                            "\tlogallrefupdates = true\n"),
            "");
  EXPECT_EQ(UnsafeGitConfig("[remote \"origin\"]\n\turl = https://example.com/a.git\n"
                            "\tfetch = +refs/heads/*:refs/remotes/origin/*\n[branch \"main\"]\n\tremote = origin\n"
                            "\tmerge = refs/heads/main\n[user]\n\tname = \"Bob # not a comment\"\n\temail = b@x\n"
                            "[init]\n\tdefaultBranch = main ; a comment\n# a comment\n; another\n\n"),
            "");
}

TEST(GitConfigCheck, KeysThatNameAProgramAreUnsafe) {
  for (const char* text : {
           "[core]\n\tfsmonitor = touch /tmp/x\n", "[core]\n\thooksPath = .hooks\n",
           "[core]\n\tsshCommand = sh\n", "[core]\n\tpager = sh\n", "[core]\n\teditor = sh\n",
           "[filter \"x\"]\n\tclean = sh\n", "[diff \"x\"]\n\ttextconv = sh\n", "[alias]\n\tst = !sh\n",
           "[include]\n\tpath = ../x\n", "[includeIf \"gitdir:/\"]\n\tpath = x\n", "[credential]\n\thelper = sh\n",
           "[diff]\n\texternal = sh\n", "[gpg]\n\tprogram = sh\n", "[sequence]\n\teditor = sh\n",
           "[remote \"o\"]\n\tuploadpack = sh\n", "[remote \"o\"]\n\treceivepack = sh\n",
           "[protocol \"ext\"]\n\tallow = always\n", "[safe]\n\tdirectory = *\n", "[core]\n\taskPass = sh\n",
           "[extensions]\n\tworktreeConfig = true\n", "[init]\n\ttemplateDir = /x\n", "[remote]\n\turl = x\n",
           "[CORE]\n\tFSMonitor = sh\n",
       }) {
    EXPECT_NE(UnsafeGitConfig(text), "") << text;
  }
  EXPECT_EQ(UnsafeGitConfig("[core]\n\tbare = false\n\tfsmonitor = sh\n"), "core.fsmonitor (line 3) is not on the safe list");
}

TEST(GitConfigCheck, RemoteUrlsThatNameATransportOrAnOptionAreUnsafe) {
  EXPECT_NE(UnsafeGitConfig("[remote \"o\"]\n\turl = ext::sh -c touch% /tmp/x\n"), "");
  EXPECT_NE(UnsafeGitConfig("[remote \"o\"]\n\tpushurl = fd::3\n"), "");
  EXPECT_NE(UnsafeGitConfig("[remote \"o\"]\n\turl = --upload-pack=sh\n"), "");
  EXPECT_EQ(UnsafeGitConfig("[remote \"o\"]\n\turl = git@github.com:a/b.git\n"), "");
  // A branch's remote may be a URL git fetches from: judged the same way.
  EXPECT_NE(UnsafeGitConfig("[branch \"main\"]\n\tremote = ext::sh -c touch% /tmp/x\n"), "");
  EXPECT_NE(UnsafeGitConfig("[branch \"main\"]\n\tpushRemote = ext::sh\n"), "");
  EXPECT_NE(UnsafeGitConfig("[branch \"main\"]\n\tremote = --upload-pack=sh\n"), "");
  EXPECT_EQ(UnsafeGitConfig("[branch \"main\"]\n\tremote = .\n\tpushremote = origin\n"), "");
}

TEST(GitConfigCheck, WhatGitMightReadDifferentlyIsUnsafe) {
  for (const char* text : {
           "[core]\n\tbare = false \\\n\tfsmonitor = sh\n",   // a continuation line
           "[core.x]\n\tbare = false\n",                      // old-style subsection
           "[core] fsmonitor = sh\n",                         // a key after the header
           "[core]\r\n\tbare = false\r\n",                    // CR
           "[core]\n\tbare = \"false\n",                      // unterminated quote
           "[core]\n\tbare = \\q\n",                          // unknown escape
           "bare = false\n",                                  // no section
           "[core\n",                                         // unterminated header
           "[remote \"o]\n",                                  // unterminated subsection
           "\xef\xbb\xbf[core]\n",                            // a byte-order mark
           "[user]\n\tname # x\n",                           // a comment after a bare key (git: bad config line)
           "[user]\n\tname ; x\n",
       }) {
    EXPECT_NE(UnsafeGitConfig(text), "") << text;
  }
  EXPECT_NE(UnsafeGitConfig(std::string("[core]\n\tbare = fa\0lse\n", 20)), "");
}

// git reads a tab outside quotes as a space (and keeps one inside quotes or
// escaped): found by comparing this reader with `git config --list -z` on
// random text.
TEST(GitConfigCheck, ATabOutsideQuotesReadsAsASpaceAsGitReadsIt) {
  Result<std::vector<GitConfigEntry>> entries = ParseGitConfig("[user]\n\tname = a\tb \"c\td\" e\\tf\t\n");
  ASSERT_TRUE(entries.ok()) << entries.error().message();
  ASSERT_EQ(entries->size(), 1u);
  EXPECT_EQ((*entries)[0].value, "a b c\td e\tf");
}

TEST(GitConfigCheck, ParsesNamesCaseInsensitivelyAndSubsectionsAsWritten) {
  Result<std::vector<GitConfigEntry>> entries =
      ParseGitConfig("[Remote \"Up\\\"x\"]\n  URL = \"a b\" \n[user]\n\tname\n");
  ASSERT_TRUE(entries.ok()) << entries.error().message();
  ASSERT_EQ(entries->size(), 2u);
  EXPECT_EQ((*entries)[0].Name(), "remote.Up\"x.url");
  EXPECT_EQ((*entries)[0].value, "a b");
  EXPECT_EQ((*entries)[1].Name(), "user.name");
  EXPECT_EQ((*entries)[1].value, "");
}

}  // namespace
}  // namespace corral
