#include "base/terminal.h"

namespace corral {
namespace {

constexpr char kEsc = '\x1b';
constexpr char kBel = '\x07';

bool InRange(char c, unsigned low, unsigned high) {
  auto byte = static_cast<unsigned char>(c);
  return byte >= low && byte <= high;
}

// Where a CSI starting at `start` (just after ESC [) ends: one past its final
// byte, or at the byte that broke it off (kept by the caller).
size_t SkipCsi(std::string_view text, size_t start) {
  size_t i = start;
  while (i < text.size() && InRange(text[i], 0x20, 0x3f)) ++i;
  if (i < text.size() && InRange(text[i], 0x40, 0x7e)) return i + 1;
  return i;  // malformed or unterminated: the breaking byte (if any) is kept
}

// Where a string (OSC, DCS, SOS, PM, APC) starting at `start` ends. BEL ends
// it and is consumed; an ESC ends it and is left to start the next sequence,
// so ST (ESC \) is then dropped as a two-byte escape.
size_t SkipString(std::string_view text, size_t start) {
  size_t i = start;
  while (i < text.size() && text[i] != kBel && text[i] != kEsc) ++i;
  if (i < text.size() && text[i] == kBel) return i + 1;
  return i;
}

bool IsStringIntroducer(char c) { return c == ']' || c == 'P' || c == 'X' || c == '^' || c == '_'; }

}  // namespace

std::string StripANSI(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    if (text[i] != kEsc) {
      out += text[i++];
      continue;
    }
    if (i + 1 >= text.size()) break;  // a lone ESC at the end
    char next = text[i + 1];
    if (next == '[') {
      i = SkipCsi(text, i + 2);
    } else if (IsStringIntroducer(next)) {
      i = SkipString(text, i + 2);
    } else if (InRange(next, 0x20, 0x2f)) {
      // nF escape: intermediates, then one final byte.
      size_t j = i + 1;
      while (j < text.size() && InRange(text[j], 0x20, 0x2f)) ++j;
      if (j < text.size() && InRange(text[j], 0x30, 0x7e)) ++j;
      i = j;
    } else if (InRange(next, 0x30, 0x7e)) {
      i += 2;
    } else {
      ++i;  // ESC before a control or non-ASCII byte (or another ESC): drop the ESC only
    }
  }
  return out;
}

std::string NormalizeText(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == kBel) continue;
    if (c == '\r') {
      out += '\n';
      if (i + 1 < text.size() && text[i + 1] == '\n') ++i;
      continue;
    }
    out += c;
  }
  return out;
}

}  // namespace corral
