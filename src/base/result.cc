#include "base/result.h"

#include <cstring>

namespace corral {

std::string_view ErrorKindName(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kUsage: return "usage";
    case ErrorKind::kConfig: return "config";
    case ErrorKind::kPolicy: return "policy";
    case ErrorKind::kPinMismatch: return "pin_mismatch";
    case ErrorKind::kUnsupported: return "unsupported";
    case ErrorKind::kNamespace: return "namespace";
    case ErrorKind::kMount: return "mount";
    case ErrorKind::kHardening: return "hardening";
    case ErrorKind::kLandlock: return "landlock";
    case ErrorKind::kSeccomp: return "seccomp";
    case ErrorKind::kExec: return "exec";
    case ErrorKind::kNotFound: return "not_found";
    case ErrorKind::kTimeout: return "timeout";
    case ErrorKind::kDenied: return "denied";
    case ErrorKind::kIo: return "io";
    case ErrorKind::kInternal: return "internal";
  }
  return "internal";
}

Error Error::FromErrno(ErrorKind kind, std::string context, std::string_view syscall, int err) {
  return Error(kind, std::move(context), syscall, err);
}

std::string Error::ToString() const {
  std::string out = message_;
  if (!syscall_.empty() || errno_ != 0) {
    out += " (";
    if (!syscall_.empty()) {
      out += syscall_;
      if (errno_ != 0) out += ": ";
    }
    if (errno_ != 0) out += std::strerror(errno_);
    out += ")";
  }
  return out;
}

}  // namespace corral
