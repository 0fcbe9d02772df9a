// ReadSmallFile: the whole of a small file (a procfs, sysfs or sysctl entry)
// with one open(2) and read(2) until the end, no stream.
//
//   std::optional<std::string> text = ReadSmallFile("/proc/self/cgroup");
//
// Contract: nullopt when the file cannot be opened, or read(2) fails (as
// /proc/self/attr/current does, EINVAL, where no security module keeps a
// label); otherwise its bytes, at most `limit` of them (a longer file is cut
// there). Nothing throws: a stream reading such a file throws and catches
// an exception inside the standard library, a few microseconds each on
// every start.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

namespace corral {

inline constexpr size_t kSmallFileLimit = 64 * 1024;

std::optional<std::string> ReadSmallFile(const char* path, size_t limit = kSmallFileLimit);

// The number `path` starts with (after blanks, as strtol reads it: "42abc"
// is 42), or `fallback` when the file cannot be read, does not start with
// one, or holds one out of range.
long ReadSmallNumber(const char* path, long fallback);

}  // namespace corral
