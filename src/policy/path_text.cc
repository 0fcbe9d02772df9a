#include "policy/path_text.h"

#include <algorithm>

#include "policy/path.h"

namespace corral {

Result<std::string> ExpandHome(std::string_view text, std::string_view home) {
  if (!text.starts_with("~")) return std::string(text);
  if (text.size() > 1 && text[1] != '/') {
    return Error(ErrorKind::kUsage, "\"~user\" paths are not supported; use an absolute path or ~/");
  }
  if (home.empty() || home[0] != '/') {
    return Error(ErrorKind::kUsage, "cannot expand ~: the home directory is unknown");
  }
  return std::string(home) + std::string(text.substr(1));
}

std::string HomePath(std::string_view tilde_path, std::string_view home) {
  if (tilde_path == "~") return std::string(home);
  if (!tilde_path.starts_with("~/")) return std::string(tilde_path);
  return CollapseSlashes(std::string(home) + std::string(tilde_path.substr(1)));
}

Result<std::string> CanonicalAbsolutePath(std::string_view text) {
  if (text.empty()) return Error(ErrorKind::kUsage, "empty path");
  if (std::any_of(text.begin(), text.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; })) {
    return Error(ErrorKind::kUsage, "the path contains a control character");
  }
  if (text[0] != '/') return Error(ErrorKind::kUsage, "must be an absolute path (or start with ~/)");
  std::string collapsed = CollapseSlashes(text);
  size_t start = 1;
  while (start < collapsed.size()) {
    size_t end = collapsed.find('/', start);
    if (end == std::string::npos) end = collapsed.size();
    std::string_view part = std::string_view(collapsed).substr(start, end - start);
    if (part == "." || part == "..") {
      return Error(ErrorKind::kUsage, "'.' and '..' components are not allowed; write the canonical path");
    }
    start = end + 1;
  }
  return collapsed;
}

}  // namespace corral
