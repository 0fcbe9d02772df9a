// Terminal sanitising: for tool output that a model or a log will read, and
// for the messages corral itself prints about paths and commands.
//
// Raw PTY output carries escape sequences that colour text, move the cursor,
// set the window title or talk to the terminal itself. StripANSI removes them
// so the text a model reads is the text a person would see; NormalizeText
// turns the line endings into plain LF.
//
//   std::string text = NormalizeText(StripANSI(raw_pty_bytes));
//
// StripANSI recognises the 7-bit forms only (the input is UTF-8, where the
// C1 bytes 0x80-0x9F are continuation bytes, not controls):
//   CSI        ESC [ , parameter and intermediate bytes 0x20-0x3F, then a
//              final byte 0x40-0x7E;
//   OSC        ESC ] ... ended by BEL or by ST (ESC \);
//   DCS, SOS, PM and APC (ESC P, ESC X, ESC ^, ESC _): strings like OSC, so
//              their payload never leaks into the text;
//   nF escapes ESC, intermediates 0x20-0x2F, one final byte (ESC ( B);
//   two-byte   ESC and any other byte 0x30-0x7E (ESC 7, ESC c, ESC =).
// An ESC always starts a new sequence, even inside another one (as the
// terminal's parser does), so a sequence cut short by an ESC is dropped and
// the new one is parsed. A sequence unterminated at the end of the text is
// dropped with it. Any other byte inside a CSI (a control or non-ASCII byte)
// ends the CSI as malformed and is kept. A lone ESC before a control byte or
// a non-ASCII byte is dropped and that byte kept.
//
// EscapeControls is the other way round: it keeps every byte visible and
// makes none of them a control. A path or a command a repository chose goes
// through it before it reaches a terminal, so a name with ESC [ or a C1 CSI
// (0x9b) in it is shown as text, never obeyed.
//
//   std::fputs(EscapeControls(message).c_str(), stderr);
//
// Security: StripANSI and NormalizeText are for displaying output, not for
// vetting commands: text shown to a person who must approve it should show
// control bytes (EscapeControls), never strip them.
#pragma once

#include <string>
#include <string_view>

namespace corral {

// `text` without CSI, OSC, string and two-byte escape sequences.
std::string StripANSI(std::string_view text);

// CRLF and bare CR become LF; BEL (0x07) is dropped. Nothing else changes.
std::string NormalizeText(std::string_view text);

// `text` with every control shown as an escape, and nothing else changed:
//   C0 (0x00-0x1f) and DEL (0x7f)              -> \xNN
//   a byte that is not part of valid UTF-8      -> \xNN (so a raw C1 byte
//     such as 0x9b, which a terminal not in UTF-8 mode obeys as CSI)
//   a UTF-8 character U+0080-U+009F (the C1 controls, which a terminal in
//     UTF-8 mode may obey)                       -> \u00NN
// Valid UTF-8 outside the C1 range passes unchanged (overlong forms,
// surrogates and code points above U+10FFFF are not valid). Backslashes are
// not doubled: callers that need an unambiguous form double them first.
std::string EscapeControls(std::string_view text);

}  // namespace corral
