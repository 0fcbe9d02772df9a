// Test support (header only, never in the library): policies for the
// provider tests, built over a temporary workspace with a FIXED host context
// and without the system trees, so what a backend emits depends only on the
// test, never on the machine (golden files replace the tree's path by
// @TREE@).
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "testing/test_scratch_dir.h"
#include "policy/policy.h"

namespace corral::testing {

inline constexpr const char* kTreePlaceholder = "@TREE@";

// The caller's context: working directory `cwd`, home /home/agent (which
// does not exist: the isolated home is an empty tmpfs), uid and gid 1000.
inline HostContext FixedHost(const std::string& cwd) {
  HostContext host;
  host.cwd = cwd;
  host.home = "/home/agent";
  host.uid = 1000;
  host.gid = 1000;
  return host;
}

// The policy for `workspace` (the working directory), plus what `configure`
// adds. The default system trees are left out.
inline Result<Policy> BuildTestPolicy(const std::string& workspace,
                                      const std::function<void(PolicyBuilder&)>& configure = {}) {
  PolicyBuilder builder(FixedHost(workspace));
  builder.WithoutSystemRoots();
  if (configure) configure(builder);
  return builder.Build();
}

// The same, best-effort (--best-effort): the policy the bubblewrap and
// seatbelt backends wrap, since neither gives every guarantee.
inline Result<Policy> BuildBestEffortTestPolicy(const std::string& workspace,
                                                const std::function<void(PolicyBuilder&)>& configure = {}) {
  return BuildTestPolicy(workspace, [&](PolicyBuilder& builder) {
    builder.SetEnforcement(Enforcement::kBestEffort);
    if (configure) configure(builder);
  });
}

// `tree`/ws laid out like a project: a .git with hooks and config (protected
// paths), a .env and a secrets/ directory (for forbid_read). Returns its path.
inline std::string ProjectWorkspace(const TestTree& tree) {
  std::string workspace = tree.Dir("ws");
  tree.Dir("ws/.git/hooks");
  tree.File("ws/.git/config", "[core]\n");
  tree.File("ws/.env", "TOKEN=secret\n");
  tree.File("ws/secrets/key.pem", "-----BEGIN-----\n");
  return workspace;
}

// A fixed environment to scrub: two allowed variables and two secrets.
inline std::vector<std::string> FixedEnvironment() {
  return {"PATH=/usr/bin:/bin", "LANG=C.UTF-8", "AWS_SECRET_ACCESS_KEY=do-not-leak", "GITHUB_TOKEN=do-not-leak"};
}

}  // namespace corral::testing
