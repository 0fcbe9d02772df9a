// The nursery holds exactly the namespaces of a sandbox with a network of
// its own: the plan of every default run fits it (exec/spawn.cc compares
// the two), and one that drifted from SandboxCloneFlags would silently
// never fit again.
#include "exec/nursery.h"

#include <gtest/gtest.h>

#include "kernel/namespaces.h"

namespace corral {
namespace {

TEST(Nursery, HoldsTheNamespacesOfASandboxWithItsOwnNetwork) {
  EXPECT_EQ(Nursery::kNamespaces, SandboxCloneFlags(NetworkNamespace::kNew));
}

}  // namespace
}  // namespace corral
