#include "base/mutant.h"

#include <cstdio>
#include <cstdlib>

namespace corral {

std::string_view MutantName(Mutant mutant) {
  switch (mutant) {
    case Mutant::kNone: return "none";
    case Mutant::kFdClose: return "fd_close";
    case Mutant::kLandlock: return "landlock";
    case Mutant::kSeccomp: return "seccomp";
    case Mutant::kSeccompPtrace: return "seccomp_ptrace";
    case Mutant::kSeccompKeyctl: return "seccomp_keyctl";
    case Mutant::kCapabilities: return "capabilities";
    case Mutant::kNetNamespace: return "net_namespace";
    case Mutant::kEnvScrub: return "env_scrub";
    case Mutant::kInitDumpable: return "init_dumpable";
    case Mutant::kLifeline: return "lifeline";
    case Mutant::kReadOnlyBinds: return "readonly_binds";
    case Mutant::kEtcMasks: return "etc_masks";
    case Mutant::kForbidMasks: return "forbid_masks";
    case Mutant::kProtectedBinds: return "protected_binds";
    case Mutant::kSweep: return "sweep";
    case Mutant::kSweepRoots: return "sweep_roots";
    case Mutant::kNoexecBinds: return "noexec_binds";
    case Mutant::kTmpfsCaps: return "tmpfs_caps";
    case Mutant::kTerminalRestore: return "terminal_restore";
    case Mutant::kPinCheck: return "pin_check";
  }
  return "none";
}

#if defined(CORRAL_MUTANTS) && CORRAL_MUTANTS
namespace {

Mutant FromEnvironment() {
  const char* name = std::getenv("CORRAL_MUTANT");
  if (name == nullptr || *name == '\0') return Mutant::kNone;
  for (int i = static_cast<int>(Mutant::kFdClose); i <= static_cast<int>(Mutant::kPinCheck); ++i) {
    if (MutantName(static_cast<Mutant>(i)) == name) return static_cast<Mutant>(i);
  }
  // An unknown name must not silently test the unmutated corral.
  std::fprintf(stderr, "corral: CORRAL_MUTANT=%s names no mutant\n", name);
  std::abort();
}

// Fixed before main(), so the child of a clone only ever reads it.
const Mutant g_active = FromEnvironment();

}  // namespace

Mutant ActiveMutant() { return g_active; }
#endif

}  // namespace corral
