#include "base/small_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

#include "base/unique_fd.h"

namespace corral {

std::optional<std::string> ReadSmallFile(const char* path, size_t limit) {
  UniqueFd fd(::open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY));
  if (!fd) return std::nullopt;
  std::string text;
  char buffer[4096];
  while (text.size() < limit) {
    ssize_t got = ::read(fd.get(), buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return std::nullopt;
    if (got == 0) break;
    text.append(buffer, static_cast<size_t>(got));
  }
  if (text.size() > limit) text.resize(limit);
  return text;
}

long ReadSmallNumber(const char* path, long fallback) {
  std::optional<std::string> text = ReadSmallFile(path, 64);
  if (!text) return fallback;
  const char* start = text->c_str();
  char* end = nullptr;
  errno = 0;
  long value = std::strtol(start, &end, 10);
  if (end == start || errno != 0) return fallback;
  return value;
}

}  // namespace corral
