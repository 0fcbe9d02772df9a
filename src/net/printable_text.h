// What a user typed, made safe to quote in a message: every byte outside
// printable ASCII (0x20-0x7e) and the backslash written as \xHH, so a rule
// with a control character or an escape sequence cannot reach a terminal raw.
//
//   Error(ErrorKind::kUsage, "--allow-host " + PrintableText(text) + ": ...");
#pragma once

#include <string>
#include <string_view>

namespace corral {

std::string PrintableText(std::string_view text);

}  // namespace corral
