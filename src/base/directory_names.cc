#include "base/directory_names.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>

namespace corral {

std::optional<std::vector<std::string>> DirectoryNamesUpTo(int dir, size_t most) {
  std::vector<std::string> names;
  int fd = ::openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return names;
  DIR* stream = ::fdopendir(fd);
  if (stream == nullptr) {
    ::close(fd);
    return names;
  }
  while (const struct dirent* entry = ::readdir(stream)) {
    std::string name = entry->d_name;
    if (name == "." || name == "..") continue;
    if (names.size() == most) {
      ::closedir(stream);
      return std::nullopt;
    }
    names.push_back(std::move(name));
  }
  ::closedir(stream);
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<std::string> DirectoryNames(int dir) { return *DirectoryNamesUpTo(dir, SIZE_MAX); }

}  // namespace corral
