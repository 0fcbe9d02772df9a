#include "base/exit_codes.h"

namespace corral {

int ExitCodeFor(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kUsage: return kExitUsage;
    case ErrorKind::kConfig: return kExitConfig;
    case ErrorKind::kPolicy:
    case ErrorKind::kPinMismatch:
    case ErrorKind::kDenied: return kExitPolicy;
    case ErrorKind::kUnsupported:
    case ErrorKind::kNamespace:
    case ErrorKind::kMount:
    case ErrorKind::kHardening:
    case ErrorKind::kLandlock:
    case ErrorKind::kSeccomp: return kExitSandbox;
    case ErrorKind::kTimeout: return kExitTimeout;
    case ErrorKind::kExec: return kExitNotExecutable;
    case ErrorKind::kNotFound: return kExitNotFound;
    case ErrorKind::kIo:
    case ErrorKind::kInternal: return kExitInternal;
  }
  return kExitInternal;
}

}  // namespace corral
