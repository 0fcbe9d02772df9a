#include "confine/runner_failure.h"

#include <algorithm>
#include <cctype>

namespace corral {
namespace {

std::string Lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view Trim(std::string_view text) {
  auto space = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  while (!text.empty() && space(text.front())) text.remove_prefix(1);
  while (!text.empty() && space(text.back())) text.remove_suffix(1);
  return text;
}

}  // namespace

std::optional<std::string> RunnerFailureRule::Matches(int exit_code, std::string_view stderr_text) const {
  // 1. The exit-code gate.
  if (exit_code == 0) return std::nullopt;
  if (!allowed_exit_codes.empty() &&
      std::find(allowed_exit_codes.begin(), allowed_exit_codes.end(), exit_code) == allowed_exit_codes.end()) {
    return std::nullopt;
  }
  // 2. Drop informational lines.
  std::vector<std::string> informational;
  for (const std::string& line : informational_lines) informational.push_back(Lower(Trim(line)));
  std::vector<std::string> remaining;
  while (!stderr_text.empty()) {
    size_t end = stderr_text.find('\n');
    std::string_view line = stderr_text.substr(0, end);
    stderr_text.remove_prefix(end == std::string_view::npos ? stderr_text.size() : end + 1);
    std::string lowered = Lower(Trim(line));
    if (std::find(informational.begin(), informational.end(), lowered) != informational.end()) continue;
    remaining.push_back(std::move(lowered));
  }
  // 3. The first fatal signature found in what is left.
  for (const std::string& signature : fatal_signatures) {
    std::string needle = Lower(signature);
    if (needle.empty()) continue;
    for (const std::string& line : remaining) {
      if (line.find(needle) != std::string::npos) return signature;
    }
  }
  return std::nullopt;
}

}  // namespace corral
