// The audit trail, read from the --audit file after each run.
#include <sys/stat.h>
#include <unistd.h>

#include <regex>

#include "harness.h"

namespace corral_it {
namespace {

class Audit : public SandboxTest {
 protected:
  // The records of one run: `spawned` first, then exactly one ending.
  void ExpectOneSpawnedThen(const std::string& ending) {
    std::vector<nlohmann::json> records = SandboxTest::Audit();
    ASSERT_EQ(records.size(), 2u) << ReadFile(audit_path()).value_or("");
    const nlohmann::json& spawned = records[0];
    EXPECT_EQ(spawned["event"], "spawned");
    EXPECT_TRUE(std::regex_match(spawned.value("policy", ""), std::regex("[0-9a-f]{64}"))) << spawned;
    for (const char* key : {"readable", "writable", "executable", "network", "ts", "run"}) {
      EXPECT_TRUE(spawned.contains(key)) << key;
    }
    EXPECT_EQ(records[1]["event"], ending);
    EXPECT_EQ(records[1]["run"], spawned["run"]);
  }

  void ExpectAuditLacks(const std::string& text) {
    EXPECT_EQ(ReadFile(audit_path()).value_or("").find(text), std::string::npos) << text;
  }
};

TEST_F(Audit, ARunIsOneSpawnedThenOneExited) {
  std::string output = RandomToken("OUTPUT");
  workspace_.Write("data.txt", output);
  Outcome outcome = RunIn({}, {"cat", "data.txt"});
  EXPECT_EQ(outcome.out, output) << outcome.Describe();
  ExpectOneSpawnedThen("exited");
  EXPECT_EQ(SandboxTest::Audit()[1]["code"], 0);
  EXPECT_EQ(SandboxTest::Audit()[1]["source"], "command");
  ExpectAuditLacks(output);
}

TEST_F(Audit, AFailedRunIsOneSpawnedThenOneFailed) {
  Outcome outcome = RunIn({"--timeout", "1"}, {"sleep", "30"});
  EXPECT_EQ(outcome.exit_code, 124) << outcome.Describe();
  ExpectOneSpawnedThen("failed");
  EXPECT_EQ(SandboxTest::Audit()[1]["reason"], "timeout");
  EXPECT_EQ(SandboxTest::Audit()[1]["source"], "corral");

  outcome = RunIn({}, {"no-such-command-in-the-sandbox"});
  EXPECT_EQ(outcome.exit_code, 127) << outcome.Describe();
  ExpectOneSpawnedThen("failed");
  EXPECT_EQ(SandboxTest::Audit()[1]["reason"], "not_found");
}

TEST_F(Audit, TheTrailHoldsNoEnvironmentValue) {
  std::string secret = RandomToken("ENVVALUE");
  Outcome outcome = RunIn({"--allow-env", "SECRET_TOKEN"}, {"env"}, WithEnv({{"SECRET_TOKEN", secret}}));
  EXPECT_NE(outcome.out.find(secret), std::string::npos) << outcome.Describe();  // it did reach the command
  ExpectOneSpawnedThen("exited");
  ExpectAuditLacks(secret);
}

// The arguments may carry a secret the caller's shell expanded: the trail
// keeps the program and the argument count only.
TEST_F(Audit, TheTrailHoldsNoArgument) {
  std::string secret = RandomToken("ARGVALUE");
  Outcome outcome = RunIn({}, {"echo", "Authorization: Bearer " + secret});
  EXPECT_NE(outcome.out.find(secret), std::string::npos) << outcome.Describe();
  ExpectOneSpawnedThen("exited");
  EXPECT_EQ(SandboxTest::Audit()[0]["argc"], 2);  // echo and its one argument
  ExpectAuditLacks(secret);
}

// A refused trail: corral says so with the one error, runs nothing (no
// marker appears) and writes nothing to the file, or to what it points at.
class AuditRefusal : public SandboxTest {
 protected:
  void ExpectRefused(const std::vector<std::string>& run_args, const std::string& trail) {
    std::optional<std::string> before = ReadFile(trail);
    std::vector<std::string> args = {"run"};
    args.insert(args.end(), run_args.begin(), run_args.end());
    for (std::string part : {std::string("--"), std::string("touch"), outside_ / "ran"}) args.push_back(part);
    SpawnOptions options;
    options.timeout = 10s;  // a FIFO trail must not hang corral
    Outcome outcome = Corral(args, options);
    EXPECT_FALSE(outcome.timed_out) << outcome.Describe();
    EXPECT_EQ(outcome.exit_code, 64) << outcome.Describe();  // usage
    EXPECT_NE(outcome.err.find("--audit"), std::string::npos) << outcome.Describe();
    EXPECT_NE(outcome.err.find("nothing was run"), std::string::npos) << outcome.Describe();
    EXPECT_FALSE(Exists(outside_ / "ran")) << "the command ran";
    // (Opening may have created it empty: that is all.)
    EXPECT_EQ(ReadFile(trail).value_or(""), before.value_or("")) << "corral wrote to the refused trail";
  }
};

// The scenario: run 1 makes audit.jsonl in the workspace and a hard
// link to it; run 2 names audit.jsonl as its trail and is refused, so no
// record of it can be forged through the link.
TEST_F(AuditRefusal, ATrailTheCommandMadeWithAHardLinkIsRefused) {
  Outcome first = RunIn({}, {"sh", "-c", "printf '' > audit.jsonl && ln audit.jsonl link"});
  ASSERT_EQ(first.exit_code, 0) << first.Describe();
  ExpectRefused({"--audit", workspace_ / "audit.jsonl"}, workspace_ / "audit.jsonl");
  EXPECT_EQ(ReadFile(workspace_ / "link"), "");
}

// The same trail moved out of the workspace keeps its second name: refused
// for the link alone, with no writable grant around it.
TEST_F(AuditRefusal, ATrailWithASecondLinkIsRefusedAnywhere) {
  WriteFile(outside_ / "trail.jsonl", "");
  ASSERT_EQ(::link((outside_ / "trail.jsonl").c_str(), (outside_ / "other").c_str()), 0);
  ExpectRefused({"--audit", outside_ / "trail.jsonl"}, outside_ / "trail.jsonl");
}

TEST_F(AuditRefusal, ASymlinkTrailIsRefused) {
  WriteFile(outside_ / "real.jsonl", "");
  ASSERT_EQ(::symlink((outside_ / "real.jsonl").c_str(), (outside_ / "trail.jsonl").c_str()), 0);
  ExpectRefused({"--audit", outside_ / "trail.jsonl"}, outside_ / "real.jsonl");
}

TEST_F(AuditRefusal, ATrailThatIsNotARegularFileIsRefused) {
  ASSERT_EQ(::mkfifo((outside_ / "fifo").c_str(), 0600), 0);
  ExpectRefused({"--audit", outside_ / "fifo"}, outside_ / "missing");
}

// A trail another uid owns is refused, though corral could write to it. Only
// root can give a file away, and an unprivileged caller cannot open another's
// 0600 file to begin with, so the root pass is what sees this check.
TEST_F(AuditRefusal, ATrailAnotherUidOwnsIsRefused) {
  if (::geteuid() != 0) {
    std::cerr << "[ NOTE ] making a file of another uid needs root: as uid " << ::getuid()
              << " this checks nothing; the root pass does\n";
    RecordProperty("other_uid_trail", "root pass only");
    return;
  }
  WriteFile(outside_ / "theirs.jsonl", "");
  ASSERT_EQ(::chown((outside_ / "theirs.jsonl").c_str(), 65534, 65534), 0);
  ASSERT_EQ(::chmod((outside_ / "theirs.jsonl").c_str(), 0666), 0);
  ExpectRefused({"--audit", outside_ / "theirs.jsonl"}, outside_ / "theirs.jsonl");
}

// A trail in the workspace or in an --allow-write tree is refused: the
// command could rewrite the directory around it. (A relative name is
// refused before that, as a grant's is: Trail.ARelativeAuditPathIsRefusedLikeAGrantPath.)
TEST_F(AuditRefusal, ATrailInsideAWritableGrantIsRefused) {
  ExpectRefused({"--audit", workspace_ / "trail.jsonl"}, workspace_ / "trail.jsonl");
  TempDir granted("corral-granted");
  ExpectRefused({"--allow-write", granted.path(), "--audit", granted / "trail.jsonl"}, granted / "trail.jsonl");
}

// Outside every writable grant, a trail in a tree the command may only read
// is accepted, and hidden from the command like corral's other files.
TEST_F(Audit, ATrailInAReadOnlyGrantIsAcceptedAndHidden) {
  TempDir readable("corral-readable");
  Outcome outcome = Corral({"run", "--allow-read", readable.path(), "--audit", readable / "trail.jsonl", "--", "sh",
                            "-c", "cat " + readable / "trail.jsonl" + " || echo hidden"});
  EXPECT_EQ(outcome.exit_code, 0) << outcome.Describe();
  EXPECT_NE(outcome.out.find("hidden"), std::string::npos) << outcome.Describe();
  std::vector<nlohmann::json> records = ReadAudit(readable / "trail.jsonl");
  ASSERT_EQ(records.size(), 2u) << ReadFile(readable / "trail.jsonl").value_or("(missing)");
  EXPECT_EQ(records[1]["event"], "exited");
}

}  // namespace
}  // namespace corral_it
