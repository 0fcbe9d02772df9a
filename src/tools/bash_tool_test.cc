// The bash tool's output as the agent (and the user's terminal, where the
// client shows it) reads it: no escape or control a terminal obeys survives.
#include "tools/bash_tool.h"

#include <gtest/gtest.h>

#include <string>

namespace corral::tools {
namespace {

TEST(BashOutput, NoControlATerminalObeysSurvives) {
  // ESC sequences, the C1 CSI as UTF-8 (U+009B) and as a raw byte, backspaces
  // that would overwrite what was printed, shift-out, DEL.
  std::string raw = "A\xc2\x9b" "2J B\x08\x08X C\x1b[31mred\x1b[0m D\x9b" "2J E\x0e F\x7f G\tH\r\nI\n";
  std::string text = SanitiseOutput(raw, "", 0);
  for (unsigned char c : text) {
    EXPECT_TRUE(c >= 0x20 || c == '\n' || c == '\t') << "control 0x" << std::hex << int(c) << " in " << text;
    EXPECT_NE(c, 0x7f) << text;
  }
  EXPECT_EQ(text.find("\xc2\x9b"), std::string::npos) << text;
  EXPECT_EQ(text.find('\x9b'), std::string::npos) << text;
  // What is not a control passes unchanged, and the controls are shown, not hidden.
  EXPECT_NE(text.find("red"), std::string::npos) << text;
  EXPECT_NE(text.find("G\tH\nI\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\\x08"), std::string::npos) << text;
  EXPECT_NE(SanitiseOutput("h\xc3\xa9llo \xe2\x9c\x93\n", "", 0).find("h\xc3\xa9llo \xe2\x9c\x93\n"), std::string::npos);
}

}  // namespace
}  // namespace corral::tools
