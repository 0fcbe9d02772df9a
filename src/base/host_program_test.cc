#include "base/host_program.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>

namespace corral {
namespace {

using namespace std::chrono_literals;

TEST(HostProgram, TheCapturedStreamComesBackAndTheOtherIsDropped) {
  const std::vector<std::string> script = {"/bin/sh", "-c", "echo out; echo err >&2; exit 3"};
  Result<HostProgramResult> out = RunHostProgram(script, {}, CapturedStream::kStdout, 1024, 10s);
  ASSERT_TRUE(out.ok()) << out.error().ToString();
  EXPECT_EQ(out->output, "out\n");
  EXPECT_TRUE(out->waited);
  EXPECT_EQ(out->exit_code, 3);
  Result<HostProgramResult> err = RunHostProgram(script, {}, CapturedStream::kStderr, 1024, 10s);
  ASSERT_TRUE(err.ok());
  EXPECT_EQ(err->output, "err\n");
}

TEST(HostProgram, TheEnvironmentIsExactlyTheOneGivenAndTheOutputIsCut) {
  Result<HostProgramResult> run =
      RunHostProgram({"/usr/bin/env"}, {"ONLY=1"}, CapturedStream::kStdout, 1024, 10s);
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(run->output, "ONLY=1\n");
  Result<HostProgramResult> cut =
      RunHostProgram({"/bin/sh", "-c", "head -c 100000 /dev/zero"}, {}, CapturedStream::kStdout, 10, 10s);
  ASSERT_TRUE(cut.ok());
  EXPECT_EQ(cut->output.size(), 10u);
  EXPECT_EQ(cut->exit_code, 0) << "the rest was read, so the writer was not stopped";
}

TEST(HostProgram, TheDeadlineKillsIt) {
  auto start = std::chrono::steady_clock::now();
  Result<HostProgramResult> run = RunHostProgram({"/bin/sleep", "30"}, {}, CapturedStream::kStdout, 1024, 200ms);
  ASSERT_TRUE(run.ok());
  EXPECT_TRUE(run->timed_out);
  EXPECT_EQ(run->exit_code, -1);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
}

TEST(HostProgram, WithSigchldIgnoredItIsNotWaitedForAndSaysSo) {
  struct sigaction ignore = {}, before;
  ignore.sa_handler = SIG_IGN;
  ASSERT_EQ(::sigaction(SIGCHLD, &ignore, &before), 0);
  Result<HostProgramResult> run = RunHostProgram({"/bin/sh", "-c", "echo x; exit 2"}, {}, CapturedStream::kStdout, 1024, 10s);
  ::sigaction(SIGCHLD, &before, nullptr);
  ASSERT_TRUE(run.ok());
  EXPECT_FALSE(run->waited);
  EXPECT_EQ(run->exit_code, -1) << "not the 0 of a status never filled in";
  EXPECT_EQ(run->output, "x\n");
}

TEST(HostProgram, ARelativePathOrAMissingProgramIsAnError) {
  EXPECT_FALSE(RunHostProgram({"sh"}, {}, CapturedStream::kStdout, 1024, 1s).ok());
  Result<HostProgramResult> missing = RunHostProgram({"/nonexistent/program"}, {}, CapturedStream::kStdout, 1024, 1s);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().kind(), ErrorKind::kExec);
}

}  // namespace
}  // namespace corral
