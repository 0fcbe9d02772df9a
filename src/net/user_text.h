// Small helpers for the net layer's readers of what a user typed: cutting it
// at a separator, and quoting it in a message so that a rule with a control
// character or an escape sequence cannot reach a terminal raw (every byte
// outside printable ASCII 0x20-0x7e, and the backslash, written as \xHH).
//
//   for (std::string_view label : Split("a.example.com", '.')) ...   // "a", "example", "com"
//   Error(ErrorKind::kUsage, "--allow-host " + PrintableText(text) + ": ...");
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace corral {

// The pieces between separators, empty ones kept: "a..b" gives "a", "", "b";
// "" gives one empty piece. They point into `text`.
std::vector<std::string_view> Split(std::string_view text, char separator);

std::string PrintableText(std::string_view text);

}  // namespace corral
