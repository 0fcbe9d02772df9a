// The safe list for a config a run wrote: git init's own config and the
// keys an agent sets every day pass; every key that names a program, and
// every line read differently than git might, does not.
#include "policy/git_config_check.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>

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

// What `git config --file PATH --list -z` reads: "name\nvalue\0" per key,
// "name\0" for a bare one; nullopt when git refuses the file.
std::optional<std::string> GitReads(const std::string& path) {
  std::string command = "/usr/bin/git config --file '" + path + "' --list -z 2>/dev/null";
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return std::nullopt;
  std::string out;
  char buffer[4096];
  for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) out.append(buffer, n);
  int status = ::pclose(pipe);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return std::nullopt;
  return out;
}

// Differential: random text made of what git's syntax turns on (brackets,
// quotes, backslashes, blanks, '=', comment marks, escapes, UTF-8, vertical
// tab), under a few headers. Whatever this reader accepts, the host's git
// reads too, as the same keys with the same values in the same order.
TEST(GitConfigCheck, WhatItAcceptsGitReadsTheSame) {
  const std::vector<std::string> tokens = {"[",    "]",    "\"",   "\\", " ",     "\t",   "=",          "#",
                                           ";",    "\n",   "a",    "B",    "-",     ".",     "1",          "core",
                                           "name", "url",  "\\n", "\\\"", "\\\\", "'",    "\xc3\xa9", "\x0b",
                                           "remote \"x\""};
  const std::vector<std::string> headers = {"[core]\n", "[user]\n", "[remote \"o\"]\n", "[Remote \"O\\\"x\"]\n",
                                            "[branch \"m\"]\n"};
  const std::vector<std::string> keys = {"\tname", "url", " Key-1 ", "x"};
  const std::vector<std::string> joins = {" = ", "=", " ", ""};
  char dir[] = "/tmp/corral-gitcfg.XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  const std::string path = std::string(dir) + "/config";
  std::mt19937 random(11);
  auto pick = [&](const std::vector<std::string>& from) { return from[random() % from.size()]; };
  int accepted = 0;
  for (int round = 0; round < 5000; ++round) {
    std::string text = pick(headers);
    for (int line = 0, lines = 1 + static_cast<int>(random() % 5); line < lines; ++line) {
      if (random() % 5 == 0) text += pick(headers);
      if (random() % 2 == 0) text += pick(keys) + pick(joins);
      for (int token = 0, count = 1 + static_cast<int>(random() % 8); token < count; ++token) text += pick(tokens);
      if (random() % 4 != 0) text += "\n";
    }
    Result<std::vector<GitConfigEntry>> entries = ParseGitConfig(text);
    if (!entries) continue;
    ++accepted;
    std::string ours;
    for (const GitConfigEntry& entry : *entries) ours += entry.Name() + (entry.bare ? "" : "\n" + entry.value) + '\0';
    std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
    std::optional<std::string> git = GitReads(path);
    ASSERT_TRUE(git.has_value()) << "git refuses what corral accepts:\n" << text;
    ASSERT_EQ(*git, ours) << text;
  }
  ::unlink(path.c_str());
  ::rmdir(dir);
  EXPECT_GT(accepted, 250) << "too few accepted texts to compare anything";
}

}  // namespace
}  // namespace corral
