#include "policy/git_identity.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <map>

#include "base/unique_fd.h"
#include "policy/git_config_check.h"
#include "policy/git_files.h"

namespace corral {
namespace {

constexpr size_t kMaxValueBytes = 256;

// The user's own file: symlinks followed, but never a FIFO or a device.
std::string ReadUserFile(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  struct stat st;
  if (!fd || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) ||
      st.st_size > static_cast<off_t>(kMaxGitFileBytes)) {
    return {};
  }
  std::string text;
  char buffer[8192];
  for (;;) {
    ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0 || text.size() + static_cast<size_t>(n) > kMaxGitFileBytes) break;
    text.append(buffer, static_cast<size_t>(n));
  }
  return text;
}

bool PlainValue(const std::string& value) {
  return !value.empty() && value.size() <= kMaxValueBytes &&
         std::none_of(value.begin(), value.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; });
}

std::string Quoted(const std::string& value) {
  std::string out = "\"";
  for (char c : value) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

}  // namespace

std::string GitIdentityConfig(const std::string& home) {
  if (home.empty() || home.front() != '/') return {};
  std::map<std::string, std::string> found;  // "user.name" -> value
  for (const std::string& file : {home + "/.config/git/config", home + "/.gitconfig"}) {
    Result<std::vector<GitConfigEntry>> entries = ParseGitConfig(ReadUserFile(file));
    if (!entries) continue;
    for (const GitConfigEntry& entry : *entries) {
      if (!entry.subsection.empty() || !PlainValue(entry.value)) continue;
      std::string name = entry.section + "." + entry.key;
      if (name == "user.name" || name == "user.email" || name == "init.defaultbranch") found[name] = entry.value;
    }
  }
  std::string text;
  if (found.contains("user.name") || found.contains("user.email")) {
    text += "[user]\n";
    if (found.contains("user.name")) text += "\tname = " + Quoted(found["user.name"]) + "\n";
    if (found.contains("user.email")) text += "\temail = " + Quoted(found["user.email"]) + "\n";
  }
  if (found.contains("init.defaultbranch")) text += "[init]\n\tdefaultBranch = " + Quoted(found["init.defaultbranch"]) + "\n";
  return text;
}

}  // namespace corral
