#include "policy/git_files.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <sstream>

#include "base/mutant.h"
#include "base/unique_fd.h"

namespace corral {
namespace {

std::string Lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

std::string Trim(const std::string& text) {
  size_t first = text.find_first_not_of(" \t");
  size_t last = text.find_last_not_of(" \t\r");
  return first == std::string::npos ? std::string() : text.substr(first, last - first + 1);
}

}  // namespace

GitFileText ReadGitFile(const std::string& path) {
  GitFileText file;
  struct open_how how = {};
  // O_NONBLOCK: a FIFO must not hang the open; O_NOCTTY: nor may a terminal
  // become corral's.
  how.flags = O_RDONLY | O_NOFOLLOW | (MutantActive(Mutant::kGitFileBounds) ? 0 : O_NONBLOCK) | O_NOCTTY | O_CLOEXEC;
  how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  UniqueFd fd(static_cast<int>(::syscall(SYS_openat2, AT_FDCWD, path.c_str(), &how, sizeof how)));
  if (!fd) {
    if (errno == ENOENT || errno == ENOTDIR) return file;
    file.problem = errno == ELOOP ? "a symlink" : std::string("cannot open it: ") + std::strerror(errno);
    return file;
  }
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) {
    file.problem = std::string("cannot stat it: ") + std::strerror(errno);
    return file;
  }
  if (!S_ISREG(st.st_mode)) {
    file.problem = "not a regular file";
    return file;
  }
  if (static_cast<size_t>(st.st_size) > kMaxGitFileBytes) {
    file.problem = "larger than " + std::to_string(kMaxGitFileBytes) + " bytes";
    return file;
  }
  char buffer[8192];
  for (;;) {
    ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      file.problem = std::string("cannot read it: ") + std::strerror(errno);
      file.text.clear();
      return file;
    }
    if (n == 0) break;
    file.text.append(buffer, static_cast<size_t>(n));
    if (file.text.size() > kMaxGitFileBytes) {  // it grew since the fstat
      file.problem = "larger than " + std::to_string(kMaxGitFileBytes) + " bytes";
      file.text.clear();
      return file;
    }
  }
  file.found = true;
  return file;
}

std::string FirstLine(const std::string& text) {
  std::string line = text.substr(0, text.find('\n'));
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
  return line;
}

GitConfigRefs ParseGitConfigRefs(const std::string& text) {
  std::istringstream in(text);
  std::string line, section;
  GitConfigRefs refs;
  while (std::getline(in, line)) {
    line = Trim(line);
    if (line.empty() || line[0] == '#' || line[0] == ';') continue;
    if (line[0] == '[') {
      // "[core]", "[include]", "[includeIf \"gitdir:...\"]": the section name.
      size_t end = line.find_first_of(" \t]", 1);
      section = Lower(line.substr(1, end == std::string::npos ? std::string::npos : end - 1));
      continue;
    }
    size_t eq = line.find('=');
    if (eq == std::string::npos) continue;
    std::string key = Lower(Trim(line.substr(0, eq)));
    std::string value = Trim(line.substr(eq + 1));
    if (value.size() >= 2 && value.front() == '"' && value.back() == '"') value = value.substr(1, value.size() - 2);
    if (section == "core" && key == "hookspath") refs.hooks_path = value;
    if ((section == "include" || section == "includeif") && key == "path" && !value.empty()) {
      refs.includes.push_back(value);
    }
  }
  return refs;
}

}  // namespace corral
