// Helpers shared by the gate unit tests: a private scratch directory and
// sample session-log lines.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <initializer_list>
#include <string>
#include <string_view>

namespace corral::testing {

inline constexpr char kStart[] =
    R"({"v":1,"type":"session/start","ts":"2026-01-01T00:00:00.000000Z","data":{"cwd":"/src/app"}})";
inline constexpr char kReadOnly[] =
    R"({"v":1,"type":"sandbox/mode","ts":"2026-01-01T00:00:01.000000Z","data":{"mode":"read-only","source":"user"}})";
inline constexpr char kWrite[] =
    R"({"v":1,"type":"sandbox/mode","ts":"2026-01-01T00:00:02.000000Z","data":{"mode":"workspace-write","source":"delegation"}})";

// The lines, each ended by a newline.
inline std::string Lines(std::initializer_list<std::string_view> lines) {
  std::string text;
  for (std::string_view line : lines) (text += line) += '\n';
  return text;
}

// A private temporary directory, removed with its contents when the object
// goes away.
class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "corral-gate-XXXXXX").string();
    if (::mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  bool ok() const { return !path_.empty(); }
  const std::string& path() const { return path_; }
  std::string Join(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

}  // namespace corral::testing
