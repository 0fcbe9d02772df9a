#include "exec/denials.h"

#include <algorithm>
#include <cctype>

namespace corral {
namespace {

std::string Lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

}  // namespace

const std::vector<std::string>& KernelDenialSignatures() {
  static const std::vector<std::string> signatures = {"Read-only file system", "Permission denied",
                                                      "Operation not permitted"};
  return signatures;
}

DenialScanner::DenialScanner(std::vector<std::string> signatures) {
  for (const std::string& signature : signatures) {
    longest_ = std::max(longest_, signature.size());
    signatures_.push_back(Lower(signature));
  }
}

void DenialScanner::Feed(std::string_view chunk) {
  if (matched_ || chunk.empty()) return;
  std::string window = tail_ + Lower(chunk);
  for (size_t i = 0; i < signatures_.size(); ++i) {
    if (window.find(signatures_[i]) != std::string::npos) {
      matched_ = signatures_[i];
      return;
    }
  }
  size_t keep = longest_ > 0 ? longest_ - 1 : 0;
  tail_ = window.size() > keep ? window.substr(window.size() - keep) : window;
}

}  // namespace corral
