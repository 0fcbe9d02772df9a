#include "state/session_events.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "testing/gate_test_support.h"

namespace corral {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
using testing::kReadOnly;
using testing::kStart;
using testing::kWrite;
using testing::Lines;

TEST(SessionLogReader, ParsesStartAndModeEvents) {
  Result<ParsedSessionLog> parsed = ParseSessionLog(Lines({kStart, kReadOnly, kWrite}), "s.jsonl");
  ASSERT_TRUE(parsed.ok()) << parsed.error().ToString();
  ASSERT_EQ(parsed->events.size(), 3u);
  EXPECT_EQ(parsed->events[0].type(), "session/start");
  EXPECT_EQ(std::get<SessionStartData>(parsed->events[0].data).cwd, "/src/app");
  EXPECT_EQ(parsed->events[2].type(), "sandbox/mode");
  EXPECT_EQ(std::get<SandboxModeData>(parsed->events[2].data),
            (SandboxModeData{Mode::kWorkspaceWrite, ModeSource::kDelegation}));
  EXPECT_FALSE(parsed->dropped_torn_line);
}

TEST(SessionLogReader, WritesTheDocumentedLineShape) {
  Result<ParsedSessionLog> parsed = ParseSessionLog(Lines({kStart, kReadOnly}), "s.jsonl");
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->events[0].ToJsonLine(), kStart);
  EXPECT_EQ(parsed->events[1].ToJsonLine(), kReadOnly);
}

TEST(SessionLogReader, TornLastLineWithoutNewlineIsDropped) {
  std::string complete = Lines({kStart, kReadOnly});
  std::string text = complete + std::string(kWrite).substr(0, 30);
  Result<ParsedSessionLog> parsed = ParseSessionLog(text, "s.jsonl");
  ASSERT_TRUE(parsed.ok()) << parsed.error().ToString();
  EXPECT_EQ(parsed->events.size(), 2u);
  EXPECT_TRUE(parsed->dropped_torn_line);
  EXPECT_EQ(parsed->complete_bytes, complete.size());
}

TEST(SessionLogReader, CompleteJsonWithoutNewlineIsStillTorn) {
  std::string complete = Lines({kStart});
  Result<ParsedSessionLog> parsed = ParseSessionLog(complete + kWrite, "s.jsonl");
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->events.size(), 1u);
  EXPECT_TRUE(parsed->dropped_torn_line);
}

TEST(SessionLogReader, UnparsableLastLineWithoutNewlineIsDropped) {
  std::string complete = Lines({kStart, kReadOnly});
  Result<ParsedSessionLog> parsed = ParseSessionLog(complete + "{\"v\":1,\"type\":\"sandb", "s.jsonl");
  ASSERT_TRUE(parsed.ok()) << parsed.error().ToString();
  EXPECT_EQ(parsed->events.size(), 2u);
  EXPECT_TRUE(parsed->dropped_torn_line);
  EXPECT_EQ(parsed->complete_bytes, complete.size());
}

// corral ends every append with its newline in the same write(2), so a
// newline-terminated last line is complete: if it does not parse, the log
// is corrupt, not torn.
TEST(SessionLogReader, UnparsableLastLineWithNewlineIsRefusedWithFileAndLine) {
  for (std::string_view last : {"{\"v\":1,\"type\":\"sandb", "garbage", ""}) {
    Result<ParsedSessionLog> parsed = ParseSessionLog(Lines({kStart, kReadOnly, last}), "/x/s.jsonl");
    ASSERT_FALSE(parsed.ok()) << last;
    EXPECT_EQ(parsed.error().kind(), ErrorKind::kConfig) << last;
    EXPECT_EQ(parsed.error().code(), "session_log_corrupt") << last;
    EXPECT_THAT(parsed.error().message(), StartsWith("/x/s.jsonl:3: ")) << last;
  }
}

TEST(SessionLogReader, OverlongLastLineWithNewlineIsRefused) {
  Result<ParsedSessionLog> parsed = ParseSessionLog(Lines({kStart, std::string(70000, 'x')}), "s.jsonl");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.error().code(), "session_log_corrupt");
  EXPECT_THAT(parsed.error().message(), StartsWith("s.jsonl:2: "));
}

TEST(SessionLogReader, TextWithoutAnyNewlineIsOneTornLine) {
  Result<ParsedSessionLog> parsed = ParseSessionLog("garbage", "s.jsonl");
  ASSERT_TRUE(parsed.ok()) << parsed.error().ToString();
  EXPECT_TRUE(parsed->events.empty());
  EXPECT_TRUE(parsed->dropped_torn_line);
  EXPECT_EQ(parsed->complete_bytes, 0u);
}

TEST(SessionLogReader, CorruptInteriorLineIsRefusedWithFileAndLine) {
  Result<ParsedSessionLog> parsed = ParseSessionLog(Lines({kStart, "{not json", kReadOnly}), "/x/s.jsonl");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.error().kind(), ErrorKind::kConfig);
  EXPECT_EQ(parsed.error().code(), "session_log_corrupt");
  EXPECT_THAT(parsed.error().message(), StartsWith("/x/s.jsonl:2: "));
}

TEST(SessionLogReader, EmptyInteriorLineIsCorrupt) {
  Result<ParsedSessionLog> parsed = ParseSessionLog(Lines({kStart, "", kReadOnly}), "s.jsonl");
  ASSERT_FALSE(parsed.ok());
  EXPECT_THAT(parsed.error().message(), StartsWith("s.jsonl:2: "));
}

TEST(SessionLogReader, UnknownTypeIsRefusedEvenOnTheLastLine) {
  std::string unknown = R"({"v":1,"type":"sandbox/teleport","ts":"t","data":{}})";
  Result<ParsedSessionLog> parsed = ParseSessionLog(Lines({kStart, kReadOnly, unknown}), "s.jsonl");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.error().kind(), ErrorKind::kConfig);
  EXPECT_EQ(parsed.error().code(), "session_log_unknown_type");
  EXPECT_THAT(parsed.error().message(), StartsWith("s.jsonl:3: "));
  EXPECT_THAT(parsed.error().message(), HasSubstr("sandbox/teleport"));
}

TEST(SessionLogReader, UnknownVersionIsRefused) {
  const char* versions[] = {"2", "0", "\"1\"", "1.0", "-1", "null", "18446744073709551617"};
  for (const char* version : versions) {
    std::string line = std::string(R"({"v":)") + version + R"(,"type":"sandbox/mode","ts":"t","data":{"mode":"read-only","source":"user"}})";
    Result<ParsedSessionLog> parsed = ParseSessionLog(Lines({kStart, line}), "s.jsonl");
    ASSERT_FALSE(parsed.ok()) << version;
    EXPECT_EQ(parsed.error().code(), "session_log_unknown_version") << version;
    EXPECT_THAT(parsed.error().message(), StartsWith("s.jsonl:2: ")) << version;
  }
}

TEST(SessionLogReader, BadFieldsAreRefused) {
  struct Case {
    const char* why;
    std::string line;
  };
  const Case cases[] = {
      {"bad mode", R"({"v":1,"type":"sandbox/mode","ts":"t","data":{"mode":"root","source":"user"}})"},
      {"bad source", R"({"v":1,"type":"sandbox/mode","ts":"t","data":{"mode":"read-only","source":"model"}})"},
      {"missing source", R"({"v":1,"type":"sandbox/mode","ts":"t","data":{"mode":"read-only"}})"},
      {"extra data key", R"({"v":1,"type":"sandbox/mode","ts":"t","data":{"mode":"read-only","source":"user","x":1}})"},
      {"extra top key", R"({"v":1,"type":"sandbox/mode","ts":"t","data":{"mode":"read-only","source":"user"},"x":1})"},
      {"missing version", R"({"type":"sandbox/mode","ts":"t","data":{"mode":"read-only","source":"user"}})"},
      {"data not object", R"({"v":1,"type":"sandbox/mode","ts":"t","data":"read-only"})"},
      {"ts not string", R"({"v":1,"type":"sandbox/mode","ts":5,"data":{"mode":"read-only","source":"user"}})"},
      {"ts with escape", "{\"v\":1,\"type\":\"sandbox/mode\",\"ts\":\"\\u001b[31m\",\"data\":{\"mode\":\"read-only\",\"source\":\"user\"}}"},
      {"type not string", R"({"v":1,"type":7,"ts":"t","data":{}})"},
      {"not an object", R"(["v",1])"},
      {"second session/start", R"({"v":1,"type":"session/start","ts":"t","data":{"cwd":"/elsewhere"}})"},
  };
  for (const Case& test : cases) {
    Result<ParsedSessionLog> parsed = ParseSessionLog(Lines({kStart, test.line}), "s.jsonl");
    ASSERT_FALSE(parsed.ok()) << test.why;
    EXPECT_EQ(parsed.error().kind(), ErrorKind::kConfig) << test.why;
    EXPECT_THAT(parsed.error().message(), StartsWith("s.jsonl:2: ")) << test.why;
  }
}

TEST(SessionLogReader, StartMustComeFirstAndHaveAnAbsoluteCwd) {
  Result<ParsedSessionLog> mode_first = ParseSessionLog(Lines({kReadOnly, kStart}), "s.jsonl");
  ASSERT_FALSE(mode_first.ok());
  EXPECT_THAT(mode_first.error().message(), StartsWith("s.jsonl:1: "));
  std::string relative = R"({"v":1,"type":"session/start","ts":"t","data":{"cwd":"src/app"}})";
  Result<ParsedSessionLog> parsed = ParseSessionLog(Lines({relative}), "s.jsonl");
  ASSERT_FALSE(parsed.ok());
  EXPECT_THAT(parsed.error().message(), HasSubstr("absolute"));
}

TEST(SessionLogReader, ErrorMessagesNeverCarryRawControlBytes) {
  std::string evil = "{\"v\":1,\"type\":\"\\u001b]0;pwned\\u0007\",\"ts\":\"t\",\"data\":{}}";
  Result<ParsedSessionLog> parsed = ParseSessionLog(Lines({kStart, evil}), "s.jsonl");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.error().message().find('\x1b'), std::string::npos);
  EXPECT_EQ(parsed.error().message().find('\x07'), std::string::npos);
}

TEST(SessionLogReader, EffectiveSandboxModeFoldsFromTheEnd) {
  EXPECT_FALSE(EffectiveSandboxMode({}).has_value());
  std::vector<SessionEvent> events = {
      {"a", SessionStartData{"/w"}},
      {"b", SandboxModeData{Mode::kDangerFullAccess, ModeSource::kUser}},
      {"c", SandboxModeData{Mode::kReadOnly, ModeSource::kEscalation}},
  };
  EXPECT_EQ(EffectiveSandboxMode(events), (SandboxModeData{Mode::kReadOnly, ModeSource::kEscalation}));
  events.resize(2);
  EXPECT_EQ(EffectiveSandboxMode(events)->mode, Mode::kDangerFullAccess);
  events.resize(1);
  EXPECT_FALSE(EffectiveSandboxMode(events).has_value());
}

TEST(SessionLogReader, ModeSourceNamesRoundTrip) {
  for (ModeSource source : {ModeSource::kUser, ModeSource::kDelegation, ModeSource::kEscalation}) {
    EXPECT_EQ(ParseModeSource(ModeSourceName(source)), source);
  }
  EXPECT_FALSE(ParseModeSource("User").has_value());
}

// What "allow for the session" covers: the class, in the workspace it was
// answered in, in that mode or a narrower one; never a wider mode, another
// workspace, or a run with no workspace.
TEST(SessionLogReader, ApprovalAllowEventsRoundTripAndAllowOnlyWhatWasAnswered) {
  const std::string allow_push =
      R"({"v":1,"type":"approval/allow","ts":"t","data":{"class":"command:git-push","mode":"workspace-write",)"
      R"("workspace":"/src/app"}})";
  const std::string allow_rm =
      R"({"v":1,"type":"approval/allow","ts":"t","data":{"class":"command:rm-rf","mode":"read-only",)"
      R"("workspace":"/src/app"}})";
  const std::string allow_shell =
      R"({"v":1,"type":"approval/allow","ts":"t","data":{"class":"command:unparsed-shell","mode":"read-only",)"
      R"("workspace":null}})";
  Result<ParsedSessionLog> parsed = ParseSessionLog(
      testing::Lines({testing::kStart, allow_push, testing::kReadOnly, allow_rm, allow_push, allow_shell}), "s");
  ASSERT_TRUE(parsed.ok()) << parsed.error().ToString();
  EXPECT_EQ(parsed->events[1].type(), "approval/allow");
  EXPECT_EQ(parsed->events[1].ToJsonLine(), allow_push);
  EXPECT_EQ(parsed->events[5].ToJsonLine(), allow_shell);
  using Classes = std::vector<std::string>;
  EXPECT_EQ(SessionAllowedClasses(parsed->events, Mode::kReadOnly, "/src/app"),
            (Classes{"command:git-push", "command:rm-rf"}));
  EXPECT_EQ(SessionAllowedClasses(parsed->events, Mode::kWorkspaceWrite, "/src/app"), Classes{"command:git-push"});
  EXPECT_EQ(SessionAllowedClasses(parsed->events, Mode::kDangerFullAccess, "/src/app"), Classes{});
  EXPECT_EQ(SessionAllowedClasses(parsed->events, Mode::kReadOnly, "/src/other"), Classes{});
  EXPECT_EQ(SessionAllowedClasses(parsed->events, Mode::kReadOnly, ""), Classes{"command:unparsed-shell"});
  // The mode is still the last sandbox/mode event's.
  EXPECT_EQ(EffectiveSandboxMode(parsed->events)->mode, Mode::kReadOnly);
}

TEST(SessionLogReader, AnApprovalEventThatIsNotExactlyClassModeAndWorkspaceIsRefused) {
  const std::string ok_rest = R"(,"mode":"read-only","workspace":"/w"})";
  for (const std::string& data :
       {std::string(R"({"class":"")") + ok_rest, std::string(R"({"class":"a b")") + ok_rest,
        std::string(R"({"class":"\u001b[2J")") + ok_rest, R"({"class":")" + std::string(129, 'a') + "\"" + ok_rest,
        std::string(R"({"class":"x","argv":[])") + ok_rest, std::string(R"({"class":1)") + ok_rest,
        std::string(R"({"class":"x"})"), std::string(R"({"class":"x","mode":"read-only"})"),
        std::string(R"({"class":"x","mode":"wide","workspace":"/w"})"),
        std::string(R"({"class":"x","mode":"read-only","workspace":"w"})"),
        std::string(R"({"class":"x","mode":"read-only","workspace":""})"),
        std::string(R"({"class":"x","mode":"read-only","workspace":1})")}) {
    std::string line = R"({"v":1,"type":"approval/allow","ts":"t","data":)" + data + "}";
    Result<ParsedSessionLog> parsed = ParseSessionLog(testing::Lines({testing::kStart, line}), "s.jsonl");
    ASSERT_FALSE(parsed.ok()) << data;
    EXPECT_EQ(parsed.error().code(), "session_log_corrupt") << data;
    EXPECT_THAT(parsed.error().message(), StartsWith("s.jsonl:2: "));
  }
}

}  // namespace
}  // namespace corral
