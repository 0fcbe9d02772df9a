// Recognising a sandbox denial in a command's stderr.
//
// A confined command that hits the sandbox fails the way it fails on any
// read-only or unreadable file: the kernel says "Read-only file system",
// "Permission denied" or "Operation not permitted", and the program prints
// that. The scanner looks for those texts in the stream corral relays, so a
// failed run can carry the model-facing denial marker instead of looking like
// an ordinary command failure. It is a heuristic for the report, never a
// security decision: enforcement happened in the kernel already.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace corral {

// The texts the kernel's EROFS, EACCES and EPERM produce through strerror.
const std::vector<std::string>& KernelDenialSignatures();

class DenialScanner {
 public:
  explicit DenialScanner(std::vector<std::string> signatures = KernelDenialSignatures());

  // Scans the next chunk of the stream; matches may span chunk boundaries.
  void Feed(std::string_view chunk);
  // The first signature seen, compared case-insensitively.
  const std::optional<std::string>& matched() const { return matched_; }

 private:
  std::vector<std::string> signatures_;  // lower-cased
  std::string tail_;                     // the end of the previous chunk
  size_t longest_ = 0;
  std::optional<std::string> matched_;
};

}  // namespace corral
