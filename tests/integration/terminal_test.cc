// TIOCSTI on a pty the test owns: a denial means no byte reached the pty's
// input queue (read on the slave) and nothing was echoed (read on the master).
#include "harness.h"

namespace corral_it {
namespace {

using TerminalEscape = SandboxTest;

// The first C1 control in `text` that a terminal could obey, described, or
// "" when there is none: a byte 0x80-0x9f that is not part of a valid UTF-8
// sequence, or a UTF-8 character U+0080-U+009F. (Written apart from corral's
// own escaping, which it judges.)
std::string FirstC1(const std::string& text) {
  size_t i = 0;
  while (i < text.size()) {
    auto byte = static_cast<unsigned char>(text[i]);
    size_t length = 0;
    if (byte < 0x80) length = 1;
    if ((byte & 0xe0) == 0xc0) length = 2;
    if ((byte & 0xf0) == 0xe0) length = 3;
    if ((byte & 0xf8) == 0xf0) length = 4;
    bool valid = length > 0 && i + length <= text.size();
    for (size_t k = 1; valid && k < length; ++k) valid = (static_cast<unsigned char>(text[i + k]) & 0xc0) == 0x80;
    if (!valid) {
      if (byte >= 0x80 && byte <= 0x9f) return "raw byte " + std::to_string(byte) + " at " + std::to_string(i);
      ++i;
      continue;
    }
    if (length == 2 && byte == 0xc2 && static_cast<unsigned char>(text[i + 1]) <= 0x9f) {
      return "U+00" + std::to_string(static_cast<unsigned char>(text[i + 1])) + " at " + std::to_string(i);
    }
    i += length;
  }
  return "";
}

// A name the command chose, with C1 CSI and OSC in it (raw, and as UTF-8),
// reaches corral's report of what the sweep did as visible escapes.
TEST_F(TerminalEscape, C1ControlsInAPathNameReachStderrEscaped) {
  const std::string name = "c1\x9b" "31m\x9d" "0;t\x07\xc2\x9b" "2J";
  workspace_.Mkdir(".git/hooks");
  // Run 1 makes a submodule gitdir with that name (nothing protects
  // modules/ itself); run 2, whose discovery protects that gitdir's entries,
  // creates its hooks, and the sweep reports the path.
  Outcome first = RunIn({}, {"mkdir", "-p", ".git/modules/" + name});
  ASSERT_EQ(first.exit_code, 0) << first.Describe();
  Outcome second = RunIn({}, {"mkdir", "-p", ".git/modules/" + name + "/hooks"});
  EXPECT_EQ(FirstC1(second.err), "") << second.err;
  EXPECT_NE(second.err.find("c1\\x9b31m\\x9d0;t\\x07\\u009b2J"), std::string::npos) << second.Describe();
  EXPECT_EQ(FirstC1(first.err), "") << first.err;
}

TEST_F(TerminalEscape, TiocstiCannotInjectIntoAPty) {
  // Control, where the host allows TIOCSTI at all: outside corral the probe
  // does inject.
  if (ReadFile("/proc/sys/dev/tty/legacy_tiocsti").value_or("1") != "0\n") {
    Pty bare;
    bare.NonCanonical();
    SpawnOptions options;
    options.stdin_fd = bare.slave();
    Execute({ProbePath("tiocsti")}, options);
    EXPECT_NE(bare.Injected().find('x'), std::string::npos);
  }
  Pty pty;
  pty.NonCanonical();
  SpawnOptions options;
  options.stdin_fd = pty.slave();
  EXPECT_PROBE_BLOCKED(Probe("tiocsti", {}, {}, options));
  EXPECT_EQ(pty.Injected(), "");
}

}  // namespace
}  // namespace corral_it
