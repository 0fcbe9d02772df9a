#include "base/terminal.h"

#include "base/mutant.h"

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

// The length of the valid UTF-8 sequence at `i` (2 to 4) and its code point,
// or 0 when the bytes there are not one.
size_t Utf8Sequence(std::string_view text, size_t i, char32_t* code_point) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  unsigned char lead = byte(i);
  size_t length = 0;
  if (lead >= 0xc2 && lead <= 0xdf) length = 2;
  if (lead >= 0xe0 && lead <= 0xef) length = 3;
  if (lead >= 0xf0 && lead <= 0xf4) length = 4;
  if (length == 0 || i + length > text.size()) return 0;
  char32_t value = lead & (0x7f >> length);
  for (size_t k = 1; k < length; ++k) {
    if ((byte(i + k) & 0xc0) != 0x80) return 0;
    value = (value << 6) | (byte(i + k) & 0x3f);
  }
  constexpr char32_t kSmallest[] = {0, 0, 0x80, 0x800, 0x10000};
  if (value < kSmallest[length] || value > 0x10ffff || (value >= 0xd800 && value <= 0xdfff)) return 0;
  *code_point = value;
  return length;
}

void AppendHex(std::string& out, const char* prefix, unsigned value) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += prefix;
  out += kHex[(value >> 4) & 0xf];
  out += kHex[value & 0xf];
}

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

std::string EscapeControls(std::string_view text) {
  if (MutantActive(Mutant::kControlsEscape)) return std::string(text);
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    auto byte = static_cast<unsigned char>(text[i]);
    if (byte < 0x20 || byte == 0x7f) {
      AppendHex(out, "\\x", byte);
      ++i;
      continue;
    }
    if (byte < 0x80) {
      out += text[i++];
      continue;
    }
    char32_t code_point = 0;
    size_t length = Utf8Sequence(text, i, &code_point);
    if (length == 0) {
      AppendHex(out, "\\x", byte);
      ++i;
    } else if (code_point <= 0x9f) {
      AppendHex(out, "\\u00", static_cast<unsigned>(code_point));
      i += length;
    } else {
      out.append(text.substr(i, length));
      i += length;
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
