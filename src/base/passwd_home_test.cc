#include "base/passwd_home.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <string>

#include "testing/test_scratch_dir.h"

namespace corral {
namespace {

class PasswdHomeTest : public ::testing::Test {
 protected:
  std::string Write(const std::string& name, const std::string& text, mode_t mode = 0644) {
    std::string path = tree_.File(name, text);
    ::chmod(path.c_str(), mode);
    return path;
  }

  corral::testing::TestTree tree_;
  const std::string& dir_ = tree_.path();
};

TEST_F(PasswdHomeTest, TheFilesFirstEntryForTheUidGivesTheHome) {
  std::string passwd = Write("passwd",
                             "root:x:0:0:root:/root:/bin/bash\n"
                             "alice:x:1000:1000:Alice,,,:/home/alice:/bin/bash\n"
                             "alias:x:1000:1000::/home/alias:/bin/sh\n"
                             "bob:x:1001:1001::/home/bob:/bin/sh");  // no newline at the end
  EXPECT_EQ(PasswdHomeFrom(1000, passwd, {}), "/home/alice");
  EXPECT_EQ(PasswdHomeFrom(0, passwd, {}), "/root");
  EXPECT_EQ(PasswdHomeFrom(1001, passwd, {}), "/home/bob");
  EXPECT_EQ(PasswdHomeFrom(1002, passwd, {}), std::nullopt);
}

TEST_F(PasswdHomeTest, CommentsCompatEntriesAndUnparsableLinesAreSkipped) {
  std::string passwd = Write("passwd",
                             "#old:x:1000:1000::/home/old:/bin/sh\n"
                             "+alice:x:1000:1000::/home/plus:/bin/sh\n"
                             "-alice\n"
                             "+\n"
                             "hex:x:0x3e8:1000::/home/hex:/bin/sh\n"
                             "word:x:alice:1000::/home/word:/bin/sh\n"
                             "\n"
                             "alice:x:1000:1000::/home/alice:/bin/sh\n");
  EXPECT_EQ(PasswdHomeFrom(1000, passwd, {}), "/home/alice");
  EXPECT_EQ(PasswdHomeFrom(0, passwd, {}), std::nullopt) << "a bare + is no entry for uid 0";
}

TEST_F(PasswdHomeTest, ALineLongerThanTheFirstBufferIsReadWhole) {
  std::string gecos(10000, 'g');
  std::string passwd = Write("passwd", "long:x:5:5:" + gecos + ":/home/long:/bin/sh\n");
  EXPECT_EQ(PasswdHomeFrom(5, passwd, {}), "/home/long");
}

TEST_F(PasswdHomeTest, AHomeThatIsEmptyOrRelativeIsNone) {
  std::string passwd = Write("passwd", "a:x:1:1:::/bin/sh\nb:x:2:2::home/b:/bin/sh\n");
  EXPECT_EQ(PasswdHomeFrom(1, passwd, {}), std::nullopt);
  EXPECT_EQ(PasswdHomeFrom(2, passwd, {}), std::nullopt);
}

TEST_F(PasswdHomeTest, AUidTheFileLacksIsAskedOfGetentWithNothingFromTheEnvironment) {
  std::string passwd = Write("passwd", "root:x:0:0:root:/root:/bin/bash\n");
  // The stub answers only `passwd 4242`, and only with an empty environment.
  std::string getent = Write("getent",
                             "#!/bin/sh\n"
                             "[ \"$1 $2\" = 'passwd 4242' ] || exit 2\n"
                             "[ -z \"$CORRAL_PASSWD_TEST$HOME\" ] || exit 3\n"
                             "echo 'ldap:*:4242:4242:From LDAP:/net/home/ldap:/bin/sh'\n",
                             0755);
  ::setenv("CORRAL_PASSWD_TEST", "1", 1);  // not passed on
  EXPECT_EQ(PasswdHomeFrom(4242, passwd, {dir_ + "/missing", getent}), "/net/home/ldap");
  ::unsetenv("CORRAL_PASSWD_TEST");
  EXPECT_EQ(PasswdHomeFrom(4343, passwd, {getent}), std::nullopt) << "getent failed";
  EXPECT_EQ(PasswdHomeFrom(0, passwd, {getent}), "/root") << "the file's entry, getent not asked";
}

TEST_F(PasswdHomeTest, GetentsAnswerCountsOnlyForTheUidAsked) {
  std::string passwd = Write("passwd", "");
  std::string getent = Write("getent", "#!/bin/sh\necho 'other:x:7:7::/home/other:/bin/sh'\n", 0755);
  EXPECT_EQ(PasswdHomeFrom(8, passwd, {getent}), std::nullopt);
  EXPECT_EQ(PasswdHomeFrom(7, passwd, {getent}), "/home/other");
}

TEST_F(PasswdHomeTest, AGetentThatFailsOrHangsGivesNone) {
  std::string passwd = Write("passwd", "");
  std::string failing = Write("failing", "#!/bin/sh\necho 'x:x:9:9::/home/x:/bin/sh'\nexit 2\n", 0755);
  EXPECT_EQ(PasswdHomeFrom(9, passwd, {failing}), std::nullopt) << "its output does not count when it fails";
  // A name service that never answers: killed at the deadline, no answer.
  std::string hanging = Write("hanging", "#!/bin/sh\nexec sleep 30\n", 0755);
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(PasswdHomeFrom(9, passwd, {hanging}, std::chrono::milliseconds(200)), std::nullopt);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST_F(PasswdHomeTest, NoFileAndNoGetentIsNone) {
  EXPECT_EQ(PasswdHomeFrom(0, dir_ + "/absent", {dir_ + "/absent-getent"}), std::nullopt);
}

TEST(PasswdHome, TheHostsOwnEntryForThisUidMatchesGetent) {
  // Whatever the source, the answer for this process's uid is getent's.
  FILE* pipe = ::popen(("getent passwd " + std::to_string(::getuid())).c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  char line[4096] = {};
  bool got = std::fgets(line, sizeof line, pipe) != nullptr;
  ::pclose(pipe);
  ASSERT_TRUE(got) << "getent has no entry for this uid";
  std::string text(line);
  size_t home_start = 0;
  for (int i = 0; i < 5; ++i) home_start = text.find(':', home_start) + 1;
  std::string home = text.substr(home_start, text.find(':', home_start) - home_start);
  EXPECT_EQ(PasswdHome(::getuid()), home);
}

}  // namespace
}  // namespace corral
