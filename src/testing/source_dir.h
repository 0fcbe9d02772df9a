// Test support (header only, never in the library): the source tree the unit
// tests read their fixtures from (golden files, fuzz seeds, the docs they
// check against the code).
//
//   std::ifstream in(SourceDir() / "docs" / "config.md");
//
// It is $CORRAL_SOURCE_DIR when that is set and not empty: a run as another
// user (uid 65534 in scripts/test.sh and scripts/mutants.sh) stages the
// fixtures where that user can read them, because the checkout may live
// under a directory only its owner can enter. Otherwise it is the tree the
// tests were built from (the CORRAL_SOURCE_DIR definition), so the tests run
// from any working directory, also when a compiler cache makes __FILE__
// relative.
#pragma once

#include <cstdlib>
#include <filesystem>

namespace corral::testing {

inline std::filesystem::path SourceDir() {
  const char* staged = std::getenv("CORRAL_SOURCE_DIR");
  if (staged != nullptr && *staged != '\0') return staged;
  return CORRAL_SOURCE_DIR;
}

}  // namespace corral::testing
