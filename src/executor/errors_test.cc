#include "executor/errors.h"

#include <gtest/gtest.h>

#include "executor/executor.h"

namespace corral::executor {
namespace {

TEST(ExecutorErrors, EveryClassSurvivesAsTheErrorsCode) {
  for (int i = 0; i <= static_cast<int>(ExecutorErrc::kInternal); ++i) {
    ExecutorErrc errc = static_cast<ExecutorErrc>(i);
    Error error = ExecutorError(errc, "why");
    EXPECT_EQ(error.code(), ExecutorErrcName(errc));
    EXPECT_EQ(ExecutorErrcOf(error), errc) << error.code();
    EXPECT_EQ(ExecutorErrcOf(Reclassify(errc, Error(ErrorKind::kIo, "inner"))), errc);
  }
}

TEST(ExecutorErrors, ErrorsFromOtherLayersAreClassifiedByKind) {
  EXPECT_EQ(ExecutorErrcOf(Error(ErrorKind::kDenied, "approval_denied")), ExecutorErrc::kRefusedByGate);
  EXPECT_EQ(ExecutorErrcOf(Error(ErrorKind::kLandlock, "no landlock")), ExecutorErrc::kSandboxUnavailable);
  EXPECT_EQ(ExecutorErrcOf(Error(ErrorKind::kUnsupported, "no userns")), ExecutorErrc::kSandboxUnavailable);
  EXPECT_EQ(ExecutorErrcOf(Error(ErrorKind::kNotFound, "no such program")), ExecutorErrc::kCommandNotFound);
  EXPECT_EQ(ExecutorErrcOf(Error(ErrorKind::kConfig, "bad key")), ExecutorErrc::kPolicy);
  EXPECT_EQ(ExecutorErrcOf(Error(ErrorKind::kTimeout, "late")), ExecutorErrc::kDeadline);
}

TEST(ExecutorPolicyJson, TheConfigTablesBecomeTheSameTomlValues) {
  Result<std::string> toml = ConfigJsonToToml(
      R"({"sandbox": {"mode": "read-only", "allow_read": ["/srv/a \"b\"", "/x"], "timeout": 30, "best_effort": false},
          "approval": {"policy": "ask-dangerous"}})");
  ASSERT_TRUE(toml.ok()) << toml.error().ToString();
  EXPECT_EQ(*toml,
            "[approval]\npolicy = \"ask-dangerous\"\n[sandbox]\nallow_read = [\"/srv/a \\\"b\\\"\",\"/x\"]\n"
            "best_effort = false\nmode = \"read-only\"\ntimeout = 30\n");
}

TEST(ExecutorPolicyJson, AnythingButTablesOfScalarsIsRefused) {
  for (const char* bad : {"", "[]", "1", R"({"sandbox": 1})", R"({"a b": {}})", R"({"sandbox": {"k": {"n": 1}}})",
                          R"({"sandbox": {"k": [[1]]}})", R"({"sandbox": {"k": null}})", R"({"sandbox": {"k=1\nx": 1}})",
                          "{\"sandbox\": {\"mode\": \"\xff\"}}"}) {
    Result<std::string> toml = ConfigJsonToToml(bad);
    ASSERT_FALSE(toml.ok()) << bad;
    EXPECT_EQ(ExecutorErrcOf(toml.error()), ExecutorErrc::kPolicy) << bad;
  }
}

}  // namespace
}  // namespace corral::executor
