#include <gtest/gtest.h>

#include <csignal>

#include "executor/call.h"

namespace corral::executor {
namespace {

// A run whose sweep left something at a protected path: the CLI exits 79
// (RunResult::exit_status), a library caller gets the command's own status
// and the paths left, never a 79 it cannot tell from the command's.
TEST(CommandEnd, TheCommandsStatusAndThePathsTheSweepLeft) {
  RunResult result;
  result.source = RunResult::Source::kCorral;
  result.exit_status = 79;
  result.outcome.kind = SupervisedExit::Kind::kExited;
  result.outcome.code = 3;
  result.quarantined = {
      {"/ws/.git/hooks", "created", SweepFinding::Outcome::kLeftInPlace, {}, "Device or resource busy", {}},
      {"/ws/.envrc", "created", SweepFinding::Outcome::kQuarantined, "/state/q/ws/.envrc", {}, {}},
      {"/gone", "unreachable", SweepFinding::Outcome::kLeftInPlace, {}, "the writable root /gone is gone", {}},
  };
  CommandEnd end = CommandEndOf(result);
  EXPECT_EQ(end.exit_code, 3);
  EXPECT_FALSE(end.signal);
  EXPECT_EQ(end.protected_left, (std::vector<std::string>{"/ws/.git/hooks", "/gone"}));

  result.quarantined.clear();
  result.source = RunResult::Source::kCommand;
  result.outcome.kind = SupervisedExit::Kind::kSignaled;
  result.outcome.signal = SIGTERM;
  end = CommandEndOf(result);
  EXPECT_EQ(end.exit_code, 128 + SIGTERM);
  EXPECT_EQ(end.signal, SIGTERM);
  EXPECT_TRUE(end.protected_left.empty());
}

}  // namespace
}  // namespace corral::executor
