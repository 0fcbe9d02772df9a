// Terminal sanitising for tool output that a model or a log will read.
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
// Security: these functions are for displaying output, not for vetting
// commands: text shown to a person who must approve it should show control
// bytes (see the approval prompt), never strip them.
#pragma once

#include <string>
#include <string_view>

namespace corral {

// `text` without CSI, OSC, string and two-byte escape sequences.
std::string StripANSI(std::string_view text);

// CRLF and bare CR become LF; BEL (0x07) is dropped. Nothing else changes.
std::string NormalizeText(std::string_view text);

}  // namespace corral
