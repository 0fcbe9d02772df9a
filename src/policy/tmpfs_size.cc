#include "policy/tmpfs_size.h"

#include <array>

#include "base/mutant.h"

namespace corral {
namespace {

constexpr uint64_t kBytesPerInode = 8 * 1024;

struct Unit {
  char letter;
  uint64_t bytes;
};
constexpr std::array<Unit, 4> kUnits = {{{'t', 1024 * 1024 * kMiB}, {'g', 1024 * kMiB}, {'m', kMiB}, {'k', 1024}}};

std::string Options(uint64_t size, std::string_view mode) {
  if (MutantActive(Mutant::kTmpfsCaps)) return "mode=" + std::string(mode);
  uint64_t inodes = size / kBytesPerInode;
  return "mode=" + std::string(mode) + ",size=" + std::to_string(size) + ",nr_inodes=" + std::to_string(inodes);
}

}  // namespace

Result<uint64_t> ParseTmpfsSize(std::string_view text) {
  return ParseSize(text, kMinTmpfsSize, kMaxTmpfsSize, "tmpfs size");
}

Result<uint64_t> ParseSize(std::string_view text, uint64_t minimum, uint64_t maximum, std::string_view what) {
  auto bad = [&](const std::string& why) {
    return Error(ErrorKind::kUsage, std::string(what) + " \"" + std::string(text) + "\": " + why);
  };
  std::string_view digits = text;
  uint64_t unit = 1;
  if (!digits.empty()) {
    char last = static_cast<char>(digits.back() | 0x20);
    for (const Unit& candidate : kUnits) {
      if (last == candidate.letter) {
        unit = candidate.bytes;
        digits.remove_suffix(1);
      }
    }
  }
  if (digits.empty() || digits.size() > 19) return bad("expected a whole number with k, m, g or t (for example 1g)");
  uint64_t value = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return bad("expected a whole number with k, m, g or t (for example 1g)");
    value = value * 10 + static_cast<uint64_t>(c - '0');
  }
  if (value > maximum / unit || value * unit < minimum) {
    return bad("must be between " + TmpfsSizeText(minimum) + " and " + TmpfsSizeText(maximum));
  }
  return value * unit;
}

std::string TmpfsSizeText(uint64_t bytes) {
  for (const Unit& unit : kUnits) {
    if (bytes != 0 && bytes % unit.bytes == 0) return std::to_string(bytes / unit.bytes) + unit.letter;
  }
  return std::to_string(bytes);
}

std::string TmpfsOptions(uint64_t size, std::string_view mode) { return Options(size, mode); }

std::string ShmTmpfsOptions(uint64_t size, std::string_view mode) { return Options(size / 4, mode); }

}  // namespace corral
