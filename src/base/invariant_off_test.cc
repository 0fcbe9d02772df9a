// The release form of CORRAL_INVARIANT, whatever this build defines: the
// condition is type-checked but never evaluated, and nothing aborts.
#undef CORRAL_INVARIANTS
#include "base/invariant.h"

#include <gtest/gtest.h>

namespace corral {
namespace {

TEST(InvariantOff, CompilesToNothing) {
  int evaluated = 0;
  CORRAL_INVARIANT(++evaluated == 42, "never evaluated");
  CORRAL_INVARIANT(false, "a false condition does not abort");
  EXPECT_EQ(evaluated, 0);
}

}  // namespace
}  // namespace corral
