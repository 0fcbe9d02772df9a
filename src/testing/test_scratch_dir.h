// Test support (header only, never in the library): a private directory tree
// for unit tests that touch the filesystem, removed with its contents when the
// object goes away. Its path is physical (symlinks resolved), so tests can
// compare it with what PinPath and friends return. The helpers build a tree in
// one line each and report failure through gtest.
#pragma once

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <climits>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace corral::testing {

class TestTree {
 public:
  TestTree() {
    std::string pattern = (std::filesystem::temp_directory_path() / "corral-unit-XXXXXX").string();
    char resolved[PATH_MAX];
    if (::mkdtemp(pattern.data()) != nullptr && ::realpath(pattern.c_str(), resolved) != nullptr) path_ = resolved;
    EXPECT_FALSE(path_.empty()) << "cannot create a temporary directory";
  }
  ~TestTree() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  TestTree(const TestTree&) = delete;
  TestTree& operator=(const TestTree&) = delete;

  const std::string& path() const { return path_; }
  std::string Join(const std::string& relative) const { return path_ + "/" + relative; }

  // Creates `relative` and its parents; returns the absolute path.
  std::string Dir(const std::string& relative) const {
    std::error_code ec;
    std::filesystem::create_directories(Join(relative), ec);
    EXPECT_FALSE(ec) << relative << ": " << ec.message();
    return Join(relative);
  }
  // Writes `contents` to `relative`, creating its parents.
  std::string File(const std::string& relative, const std::string& contents = "") const {
    std::filesystem::path full(Join(relative));
    std::error_code ec;
    std::filesystem::create_directories(full.parent_path(), ec);
    std::ofstream(full) << contents;
    EXPECT_TRUE(std::filesystem::is_regular_file(full)) << relative;
    return full.string();
  }
  // A symlink at `relative` whose text is `target`.
  std::string Symlink(const std::string& relative, const std::string& target) const {
    EXPECT_EQ(::symlink(target.c_str(), Join(relative).c_str()), 0) << relative;
    return Join(relative);
  }

  static std::string Read(const std::string& absolute) {
    std::ifstream in(absolute);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  static bool Exists(const std::string& absolute) {
    struct stat st;
    return ::lstat(absolute.c_str(), &st) == 0;
  }

 private:
  std::string path_;
};

}  // namespace corral::testing
