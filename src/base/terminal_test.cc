#include "base/terminal.h"

#include <gtest/gtest.h>

#include <string>

namespace corral {
namespace {

struct Case {
  const char* name;
  std::string input;
  std::string want;
};

// Builds strings with embedded NULs or escapes without surprises.
std::string S(std::string_view text) { return std::string(text); }

TEST(TerminalStripANSI, Table) {
  const Case cases[] = {
      {"plain text passes", "hello, world", "hello, world"},
      {"empty", "", ""},
      {"utf8 passes", "caf\xc3\xa9 \xe2\x9c\x93", "caf\xc3\xa9 \xe2\x9c\x93"},
      {"sgr colour", "\x1b[31mred\x1b[0m", "red"},
      {"sgr with many params", "\x1b[1;38;5;208mX\x1b[m", "X"},
      {"cursor movement", "a\x1b[2Ab\x1b[10;20Hc", "abc"},
      {"private mode", "\x1b[?25lhidden cursor\x1b[?25h", "hidden cursor"},
      {"csi with intermediate", "a\x1b[1 qb", "ab"},
      {"erase line", "progress\x1b[2K\rdone", "progress\rdone"},
      {"osc title ended by BEL", "\x1b]0;evil title\x07text", "text"},
      {"osc hyperlink ended by ST", "\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\", "link"},
      {"osc 52 clipboard write", "\x1b]52;c;cm0gLXJmIH4=\x07" "after", "after"},
      {"dcs payload never leaks", "a\x1bPq#0;2;0;0;0\x1b\\b", "ab"},
      {"apc payload never leaks", "a\x1b_Gf=100;AAAA\x1b\\b", "ab"},
      {"two-byte save cursor", "a\x1b" "7b\x1b" "8c", "abc"},
      {"two-byte reset", "\x1b" "cclear", "clear"},
      {"two-byte keypad", "\x1b=x\x1b>", "x"},
      {"nF charset designation", "\x1b(Bplain\x1b)0", "plain"},
      {"unterminated csi at end", "text\x1b[31", "text"},
      {"unterminated csi just the bracket", "text\x1b[", "text"},
      {"lone esc at end", "text\x1b", "text"},
      {"unterminated osc at end", "text\x1b]0;title never ends", "text"},
      {"unterminated dcs at end", "text\x1bPpayload", "text"},
      {"esc inside csi restarts", "a\x1b[31\x1b[32mb", "ab"},
      {"esc inside osc restarts", "a\x1b]0;t\x1b[1mb", "ab"},
      {"double esc", "a\x1b\x1b[1mb", "ab"},
      {"esc before newline keeps newline", "a\x1b\nb", "a\nb"},
      {"esc before utf8 keeps utf8", "a\x1b\xc3\xa9", "a\xc3\xa9"},
      {"control byte breaks csi and is kept", "a\x1b[12\nb", "a\nb"},
      {"osc BEL then text", "\x1b]2;x\x07\x07", "\x07"},
      {"text between sequences kept", "\x1b[1m1\x1b[0m2\x1b]0;t\x07" "3", "123"},
      {"nul bytes kept", S(std::string_view("a\0b", 3)), S(std::string_view("a\0b", 3))},
      {"nF cut by end", "a\x1b(", "a"},
      {"nF cut by esc", "a\x1b(\x1b[1mb", "ab"},
  };
  for (const Case& test : cases) {
    EXPECT_EQ(StripANSI(test.input), test.want) << test.name;
  }
}

TEST(TerminalStripANSI, IsIdempotent) {
  const std::string inputs[] = {"\x1b[31mred\x1b[0m", "a\x1b\x1b[1mb", "\x1b]0;t\x1b\\x", "a\x1b(\x1b"};
  for (const std::string& input : inputs) {
    std::string once = StripANSI(input);
    EXPECT_EQ(StripANSI(once), once);
    EXPECT_EQ(once.find('\x1b'), std::string::npos);
  }
}

TEST(TerminalNormalizeText, Table) {
  const Case cases[] = {
      {"plain", "a\nb", "a\nb"},
      {"crlf", "a\r\nb\r\n", "a\nb\n"},
      {"bare cr", "a\rb\r", "a\nb\n"},
      {"cr cr lf", "a\r\r\nb", "a\n\nb"},
      {"lf cr", "a\n\rb", "a\n\nb"},
      {"bel dropped", "ding\x07!\x07", "ding!"},
      {"bel between cr and lf", "a\r\x07\nb", "a\n\nb"},
      {"cr at end", "end\r", "end\n"},
      {"other controls kept", "a\tb\x1b", "a\tb\x1b"},
      {"empty", "", ""},
  };
  for (const Case& test : cases) {
    EXPECT_EQ(NormalizeText(test.input), test.want) << test.name;
  }
}

TEST(TerminalEscapeControls, Table) {
  const Case cases[] = {
      {"plain", "src/main.cc", "src/main.cc"},
      {"empty", "", ""},
      {"c0 and del", std::string("a\nb\x1b[2J\x7f\0", 9), "a\\x0ab\\x1b[2J\\x7f\\x00"},
      {"raw c1 csi and osc", "dir\x9b" "31m\x9d" "0;t", "dir\\x9b31m\\x9d0;t"},
      {"every raw c1 byte", "\x80\x9f", "\\x80\\x9f"},
      {"utf8 c1 csi", "a\xc2\x9b" "b", "a\\u009bb"},
      {"utf8 c1 range ends", "\xc2\x80\xc2\x9f", "\\u0080\\u009f"},
      {"utf8 after c1 passes", "caf\xc3\xa9 \xc2\xa0 \xe2\x9c\x93 \xf0\x9f\x90\x8e",
       "caf\xc3\xa9 \xc2\xa0 \xe2\x9c\x93 \xf0\x9f\x90\x8e"},
      {"overlong esc", "\xc0\x9b", "\\xc0\\x9b"},
      {"overlong three bytes", "\xe0\x82\x9b", "\\xe0\\x82\\x9b"},
      {"surrogate", "\xed\xa0\x80", "\\xed\\xa0\\x80"},
      {"above u+10ffff", "\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80"},
      {"truncated sequence", "\xe2\x9c", "\\xe2\\x9c"},
      {"lead then c1 byte", "\xe2\x9b" "x", "\\xe2\\x9bx"},
      {"latin-1 bytes", "\xe9t\xe9", "\\xe9t\\xe9"},
      {"backslash kept", "a\\b", "a\\b"},
  };
  for (const Case& test : cases) {
    EXPECT_EQ(EscapeControls(test.input), test.want) << test.name;
  }
}

// Whatever the bytes, the result holds no control: no C0 or DEL, no byte of
// invalid UTF-8, no U+0080-U+009F.
TEST(TerminalEscapeControls, NoControlSurvivesAnyByte) {
  for (int a = 0; a < 256; ++a) {
    for (int b = 0; b < 256; ++b) {
      std::string input = {static_cast<char>(a), static_cast<char>(b), 'x'};
      std::string out = EscapeControls(input);
      for (size_t i = 0; i < out.size(); ++i) {
        auto byte = static_cast<unsigned char>(out[i]);
        ASSERT_FALSE(byte < 0x20 || byte == 0x7f) << a << " " << b;
        if (byte == 0xc2 && i + 1 < out.size()) {
          ASSERT_FALSE(static_cast<unsigned char>(out[i + 1]) <= 0x9f) << a << " " << b;
        }
        if (byte >= 0x80 && byte <= 0x9f) {
          ASSERT_TRUE(i > 0 && static_cast<unsigned char>(out[i - 1]) >= 0xa0) << a << " " << b;
        }
      }
    }
  }
}

TEST(TerminalSanitise, StripThenNormalize) {
  EXPECT_EQ(NormalizeText(StripANSI("\x1b[32mok\x1b[0m\r\n\x1b]0;t\x07" "done\x07\r")), "ok\ndone\n");
}

}  // namespace
}  // namespace corral
