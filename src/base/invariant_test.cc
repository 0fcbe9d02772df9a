#include "base/invariant.h"

#include <gtest/gtest.h>

#include <string>

namespace corral {
namespace {

#if defined(CORRAL_INVARIANTS)

TEST(InvariantDeathTest, FalseConditionAbortsWithTheTaggedMessage) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(CORRAL_INVARIANT(1 + 1 == 3, "arithmetic broke"),
               "\\[corral invariant\\] arithmetic broke \\(.*invariant_test\\.cc:[0-9]+\\)");
}

TEST(InvariantDeathTest, MessageMayBeBuiltAtRunTime) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  std::string mode = "sideways";
  EXPECT_DEATH(CORRAL_INVARIANT(mode.empty(), "invalid sandbox mode " + mode),
               "\\[corral invariant\\] invalid sandbox mode sideways");
}

TEST(Invariant, TrueConditionDoesNothing) {
  int evaluated = 0;
  CORRAL_INVARIANT(++evaluated == 1, "evaluated once");
  EXPECT_EQ(evaluated, 1);
}

#else

// This build's own CORRAL_INVARIANT (invariant_off_test.cc forces the
// release form whatever the build defines).
TEST(Invariant, ThisBuildHasInvariantsOff) {
  int evaluated = 0;
  CORRAL_INVARIANT(++evaluated == 42, "never evaluated");
  CORRAL_INVARIANT(false, "a false condition does not abort");
  EXPECT_EQ(evaluated, 0);
}

#endif

}  // namespace
}  // namespace corral
