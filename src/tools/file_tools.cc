#include "tools/file_tools.h"

#include <dirent.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <regex.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <functional>
#include <memory>
#include <vector>

#include "base/json_bytes.h"

namespace corral::tools {
namespace {

constexpr size_t kLineCap = 2000;
constexpr size_t kReadBytesCap = 64u << 20;
constexpr size_t kEditFileCap = 16u << 20;
constexpr size_t kVisitCap = 20000;
constexpr size_t kResultCap = 1000;
constexpr int kDepthCap = 64;
constexpr size_t kGrepBytesCap = 32u << 20;
constexpr size_t kGrepLineCap = 4096;
constexpr uint64_t kRegexAtomCap = 10000;

std::string Arg(const nlohmann::json& args, const char* name, std::string fallback = "") {
  auto found = args.find(name);
  return found != args.end() && found->is_string() ? found->get<std::string>() : fallback;
}
int64_t IntArg(const nlohmann::json& args, const char* name, int64_t fallback) {
  auto found = args.find(name);
  return found != args.end() && found->is_number_integer() ? found->get<int64_t>() : fallback;
}
bool BoolArg(const nlohmann::json& args, const char* name) {
  auto found = args.find(name);
  return found != args.end() && found->is_boolean() && found->get<bool>();
}

Mode ModeOf(const Fence& fence) { return fence.policy().mode(); }

// Reads up to `cap` bytes; `truncated` says whether more was there.
Result<std::string> ReadAll(int fd, size_t cap, bool* truncated) {
  std::string out;
  char buffer[65536];
  *truncated = false;
  for (;;) {
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Error::FromErrno(ErrorKind::kIo, "cannot read the file", "read", errno);
    if (n == 0) break;
    size_t room = cap - out.size();
    out.append(buffer, std::min(room, static_cast<size_t>(n)));
    if (static_cast<size_t>(n) > room) {
      *truncated = true;
      break;
    }
  }
  return out;
}

bool LooksBinary(std::string_view head) {
  head = head.substr(0, 8192);
  if (head.find('\0') != std::string_view::npos) return true;
  // Mostly non-text bytes (other than UTF-8 sequences and common controls).
  size_t odd = 0;
  for (unsigned char c : head) {
    if (c < 0x20 && c != '\n' && c != '\r' && c != '\t' && c != '\f' && c != '\b' && c != 0x1b) ++odd;
  }
  return !head.empty() && odd * 10 > head.size();
}

// A directory entry met by a walk.
struct Entry {
  std::string path;      // host path
  std::string relative;  // below the walk's start
  unsigned char type;    // DT_*
  int dir_fd;            // the directory holding it
  std::string name;
};

// Walks below `start` without following symlinks, leaving out hidden
// entries; `visit` returns false to stop. Returns why it stopped early, or "".
std::string Walk(const Fence& fence, FencedFile start, const std::function<bool(const Entry&)>& visit) {
  size_t visited = 0;
  std::string stopped;
  std::function<void(int, const std::string&, const std::string&, int)> recurse =
      [&](int fd, const std::string& dir, const std::string& relative, int depth) {
        int copy = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
        if (copy < 0) return;
        std::unique_ptr<DIR, int (*)(DIR*)> stream(::fdopendir(copy), ::closedir);
        if (!stream) {
          ::close(copy);
          return;
        }
        std::vector<std::pair<std::string, unsigned char>> names;
        while (struct dirent* entry = ::readdir(stream.get())) {
          std::string name = entry->d_name;
          if (name == "." || name == "..") continue;
          if (++visited > kVisitCap) {
            stopped = "stopped early: visited " + std::to_string(kVisitCap) + " entries";
            return;
          }
          names.emplace_back(std::move(name), entry->d_type);
        }
        std::sort(names.begin(), names.end());
        for (auto& [name, type] : names) {
          if (!stopped.empty()) return;
          if (!fence.Shows(dir, name)) continue;
          std::string path = dir == "/" ? "/" + name : dir + "/" + name;
          if (type == DT_UNKNOWN) {
            struct stat st;
            if (::fstatat(fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
              type = S_ISDIR(st.st_mode) ? DT_DIR : S_ISLNK(st.st_mode) ? DT_LNK : S_ISREG(st.st_mode) ? DT_REG : DT_UNKNOWN;
            }
          }
          Entry entry{path, relative.empty() ? name : relative + "/" + name, type, fd, name};
          if (!visit(entry)) {
            if (stopped.empty()) stopped = "stopped early: " + std::to_string(kResultCap) + " results";
            return;
          }
          if (type == DT_DIR) {
            if (depth >= kDepthCap) {
              stopped = "stopped early: deeper than " + std::to_string(kDepthCap) + " levels";
              return;
            }
            UniqueFd child(::openat(fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
            if (child) recurse(child.get(), path, entry.relative, depth + 1);
          }
        }
      };
  recurse(start.fd.get(), start.path, "", 0);
  return stopped;
}

bool GlobMatches(const std::string& pattern, const Entry& entry) {
  if (pattern.find('/') == std::string::npos) return ::fnmatch(pattern.c_str(), entry.name.c_str(), 0) == 0;
  return ::fnmatch(pattern.c_str(), entry.relative.c_str(), 0) == 0;
}

// How many atoms glibc's regcomp builds for the ERE `pattern`: it copies the
// operand of `{m,n}` max(m,n) times (of `{m,}` m+1 times, of `+` twice), so
// nested repeats multiply, and `((a{1,100}){1,100}){1,100}` costs seconds
// and gigabytes before a byte is matched. Counted without compiling;
// saturates far above kRegexAtomCap.
uint64_t CompiledAtoms(std::string_view pattern) {
  constexpr uint64_t kSaturated = uint64_t{1} << 40;
  auto times = [](uint64_t a, uint64_t b) { return b != 0 && a > kSaturated / b ? kSaturated : a * b; };
  std::vector<uint64_t> outer;  // the enclosing groups' totals so far
  uint64_t total = 0;           // this group's atoms so far
  uint64_t last = 0;            // the atoms of the operand a repeat would copy
  auto repeat = [&](uint64_t factor) {
    uint64_t copied = times(last, std::max<uint64_t>(factor, 1));
    total = std::min(kSaturated, total - last + copied);
    last = copied;
  };
  auto atom = [&] {
    total = std::min(kSaturated, total + 1);
    last = 1;
  };
  for (size_t i = 0; i < pattern.size(); ++i) {
    char c = pattern[i];
    if (c == '\\') {
      ++i;
      atom();
    } else if (c == '[') {
      size_t j = i + 1;
      if (j < pattern.size() && pattern[j] == '^') ++j;
      if (j < pattern.size() && pattern[j] == ']') ++j;
      while (j < pattern.size() && pattern[j] != ']') {
        if (pattern[j] == '[' && j + 1 < pattern.size() &&
            (pattern[j + 1] == ':' || pattern[j + 1] == '.' || pattern[j + 1] == '=')) {
          size_t close = pattern.find(std::string{pattern[j + 1], ']'}, j + 2);
          j = close == std::string_view::npos ? pattern.size() : close + 2;
        } else {
          ++j;
        }
      }
      i = j;
      atom();
    } else if (c == '(') {
      outer.push_back(total);
      total = 0;
      last = 0;
    } else if (c == ')' && !outer.empty()) {
      uint64_t group = total;
      total = std::min(kSaturated, outer.back() + group);
      outer.pop_back();
      last = group;
    } else if (c == '|') {
      last = 0;
    } else if (c == '*' || c == '?') {
      continue;
    } else if (c == '+') {
      repeat(2);
    } else if (c == '{') {
      size_t j = i + 1;
      uint64_t low = 0, high = 0;
      bool digits = false, comma = false, high_digits = false;
      for (; j < pattern.size() && pattern[j] >= '0' && pattern[j] <= '9'; ++j, digits = true) {
        low = std::min<uint64_t>(low * 10 + static_cast<uint64_t>(pattern[j] - '0'), 1u << 20);
      }
      if (j < pattern.size() && pattern[j] == ',') {
        comma = true;
        for (++j; j < pattern.size() && pattern[j] >= '0' && pattern[j] <= '9'; ++j, high_digits = true) {
          high = std::min<uint64_t>(high * 10 + static_cast<uint64_t>(pattern[j] - '0'), 1u << 20);
        }
      }
      if (j < pattern.size() && pattern[j] == '}' && (digits || high_digits)) {
        i = j;
        repeat(high_digits ? std::max(low, high) : comma ? low + 1 : low);
      } else {
        atom();
      }
    } else {
      atom();
    }
  }
  while (!outer.empty()) {
    total = std::min(kSaturated, outer.back() + total);
    outer.pop_back();
  }
  return total;
}

}  // namespace

ToolResult ReadTool(const Fence& fence, const nlohmann::json& args) {
  Result<FencedFile> file = fence.OpenRead(Arg(args, "path"));
  if (!file.ok()) return FromError(ModeOf(fence), file.error());
  bool truncated = false;
  Result<std::string> bytes = ReadAll(file->fd.get(), kReadBytesCap, &truncated);
  if (!bytes.ok()) return Failure(file->path + ": " + bytes.error().ToString());
  nlohmann::json data = {{"path", file->path}};
  if (LooksBinary(*bytes)) {
    struct stat st;
    ::fstat(file->fd.get(), &st);
    data["binary"] = true;
    data["size"] = static_cast<int64_t>(st.st_size);
    return Ok(file->path + ": a binary file of " + std::to_string(st.st_size) + " bytes; not shown", data);
  }
  int64_t offset = IntArg(args, "offset", 1);
  int64_t limit = IntArg(args, "limit", 2000);
  std::string out;
  int64_t line_number = 0;
  int64_t shown = 0;
  size_t at = 0;
  bool more = false;
  while (at < bytes->size()) {
    size_t end = bytes->find('\n', at);
    if (end == std::string::npos) end = bytes->size();
    ++line_number;
    if (line_number >= offset) {
      if (shown == limit) {
        more = true;
        break;
      }
      std::string_view line(bytes->data() + at, end - at);
      std::string cut(line.substr(0, kLineCap));
      out += std::to_string(line_number) + "\t" + cut + (line.size() > kLineCap ? " [line cut]" : "") + "\n";
      ++shown;
    }
    at = end + 1;
  }
  if (more || truncated) {
    out += truncated ? "[stopped early: read " + std::to_string(kReadBytesCap) + " bytes of the file]\n"
                     : "[stopped early: " + std::to_string(limit) + " lines shown; pass offset " +
                           std::to_string(line_number) + " for more]\n";
  }
  data["lines"] = shown;
  data["stopped_early"] = more || truncated;
  return Ok(EscapeMarker(out), data);
}

ToolResult WriteTool(const Fence& fence, const nlohmann::json& args) {
  Result<FencedName> target = fence.OpenForWrite(Arg(args, "path"));
  if (!target.ok()) return FromError(ModeOf(fence), target.error());
  std::string content = Arg(args, "content");
  Result<void> written = ReplaceContents(*target, content);
  if (!written.ok()) return Failure(written.error().ToString());
  return Ok("wrote " + std::to_string(content.size()) + " bytes to " + target->path,
            {{"path", target->path}, {"bytes", content.size()}});
}

ToolResult EditTool(const Fence& fence, const nlohmann::json& args) {
  Result<FencedName> target = fence.OpenForWrite(Arg(args, "path"));
  if (!target.ok()) return FromError(ModeOf(fence), target.error());
  UniqueFd in(::openat(target->parent.get(), target->name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  struct stat st;
  if (!in) {
    return Failure(Error::FromErrno(errno == ENOENT ? ErrorKind::kNotFound : ErrorKind::kIo, target->path, "openat",
                                    errno)
                       .ToString() +
                   (errno == ELOOP ? " (a symlink: edit the file it points to)" : ""));
  }
  if (::fstat(in.get(), &st) != 0 || !S_ISREG(st.st_mode)) return Failure(target->path + ": not a regular file");
  bool truncated = false;
  Result<std::string> bytes = ReadAll(in.get(), kEditFileCap, &truncated);
  if (!bytes.ok()) return Failure(bytes.error().ToString());
  if (truncated) return Failure(target->path + ": larger than " + std::to_string(kEditFileCap) + " bytes; not edited");
  std::string old_string = Arg(args, "old_string");
  std::string new_string = Arg(args, "new_string");
  std::string& text = *bytes;
  size_t count = 0;
  for (size_t at = text.find(old_string); at != std::string::npos; at = text.find(old_string, at + old_string.size())) {
    ++count;
  }
  if (count == 0) return Failure(target->path + ": old_string was not found; nothing changed");
  bool all = BoolArg(args, "replace_all");
  if (count > 1 && !all) {
    return Failure(target->path + ": old_string appears " + std::to_string(count) +
                   " times; give more context to make it unique, or set replace_all; nothing changed");
  }
  std::string out;
  size_t at = 0;
  for (size_t found = text.find(old_string); found != std::string::npos; found = text.find(old_string, at)) {
    out.append(text, at, found - at);
    out += new_string;
    at = found + old_string.size();
  }
  out.append(text, at, std::string::npos);
  Result<void> written = ReplaceContents(*target, out);
  if (!written.ok()) return Failure(written.error().ToString());
  return Ok("replaced " + std::to_string(count) + " occurrence" + (count == 1 ? "" : "s") + " in " + target->path,
            {{"path", target->path}, {"replacements", count}});
}

ToolResult LsTool(const Fence& fence, const nlohmann::json& args) {
  Result<FencedFile> dir = fence.OpenDirectory(Arg(args, "path", "."));
  if (!dir.ok()) return FromError(ModeOf(fence), dir.error());
  std::string out;
  nlohmann::json entries = nlohmann::json::array();
  size_t count = 0;
  std::string base = dir->path;
  // One level: the walk is stopped at every directory by returning false... so list directly.
  int copy = ::fcntl(dir->fd.get(), F_DUPFD_CLOEXEC, 0);
  std::unique_ptr<DIR, int (*)(DIR*)> stream(copy >= 0 ? ::fdopendir(copy) : nullptr, ::closedir);
  if (!stream) {
    if (copy >= 0) ::close(copy);
    return Failure(Error::FromErrno(ErrorKind::kIo, base, "fdopendir", errno).ToString());
  }
  std::vector<std::string> names;
  std::string stopped;
  size_t visited = 0;
  while (struct dirent* entry = ::readdir(stream.get())) {
    std::string name = entry->d_name;
    if (name == "." || name == "..") continue;
    if (++visited > kVisitCap) {
      stopped = "stopped early: visited " + std::to_string(kVisitCap) + " entries";
      break;
    }
    if (!fence.Shows(base, name)) continue;
    struct stat st;
    if (::fstatat(dir->fd.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
      if (S_ISDIR(st.st_mode)) name += "/";
      if (S_ISLNK(st.st_mode)) name += "@";
    }
    names.push_back(std::move(name));
  }
  std::sort(names.begin(), names.end());
  for (const std::string& name : names) {
    if (count++ == kResultCap) {
      stopped = "stopped early: " + std::to_string(kResultCap) + " entries shown";
      break;
    }
    out += name + "\n";
    entries.push_back(name);
  }
  if (!stopped.empty()) out += "[" + stopped + "]\n";
  return Ok(EscapeMarker(out), {{"path", base}, {"entries", entries}, {"stopped_early", !stopped.empty()}});
}

ToolResult FindTool(const Fence& fence, const nlohmann::json& args) {
  Result<FencedFile> dir = fence.OpenDirectory(Arg(args, "path", "."));
  if (!dir.ok()) return FromError(ModeOf(fence), dir.error());
  std::string pattern = Arg(args, "pattern");
  std::string base = dir->path;
  std::vector<std::string> found;
  std::string stopped = Walk(fence, std::move(dir).value(), [&](const Entry& entry) {
    if (GlobMatches(pattern, entry)) found.push_back(entry.path);
    return found.size() < kResultCap;
  });
  std::string out;
  for (const std::string& path : found) out += path + "\n";
  if (!stopped.empty()) out += "[" + stopped + "]\n";
  if (found.empty() && stopped.empty()) out = "no match\n";
  return Ok(EscapeMarker(out), {{"path", base}, {"matches", found}, {"stopped_early", !stopped.empty()}});
}

ToolResult GrepTool(const Fence& fence, const nlohmann::json& args) {
  std::string pattern = Arg(args, "pattern");
  for (size_t i = 0; i + 1 < pattern.size(); ++i) {
    if (pattern[i] == '\\' && pattern[i + 1] >= '1' && pattern[i + 1] <= '9') {
      return Failure("grep: back-references are not supported (they make matching exponential)");
    }
    if (pattern[i] == '\\') ++i;
  }
  if (uint64_t atoms = CompiledAtoms(pattern); atoms > kRegexAtomCap) {
    return Failure("grep: the pattern is too large once compiled: its repeats ({m,n}, +) multiply to " +
                   std::to_string(atoms) + " atoms, more than " + std::to_string(kRegexAtomCap) +
                   "; write the repeat out shorter");
  }
  regex_t regex;
  int flags = REG_EXTENDED | REG_NOSUB | REG_NEWLINE | (BoolArg(args, "ignore_case") ? REG_ICASE : 0);
  if (int err = ::regcomp(&regex, pattern.c_str(), flags); err != 0) {
    char message[256];
    ::regerror(err, &regex, message, sizeof message);
    return Failure("grep: bad regular expression: " + std::string(message));
  }
  std::unique_ptr<regex_t, void (*)(regex_t*)> owned(&regex, ::regfree);
  std::string glob = Arg(args, "glob");
  std::string out;
  nlohmann::json matches = nlohmann::json::array();
  size_t bytes_read = 0;
  std::string stopped;
  auto search = [&](int fd, const std::string& path) -> bool {
    bool truncated = false;
    size_t room = kGrepBytesCap - bytes_read;
    Result<std::string> bytes = ReadAll(fd, room, &truncated);
    if (!bytes.ok()) return true;
    bytes_read += bytes->size();
    if (LooksBinary(*bytes)) return true;
    size_t at = 0;
    int64_t line_number = 0;
    while (at < bytes->size()) {
      size_t end = bytes->find('\n', at);
      if (end == std::string::npos) end = bytes->size();
      ++line_number;
      std::string line(bytes->data() + at, std::min(end - at, kGrepLineCap));
      if (::regexec(&regex, line.c_str(), 0, nullptr, 0) == 0) {
        std::string shown = line.substr(0, kLineCap);
        out += path + ":" + std::to_string(line_number) + ":" + shown + "\n";
        matches.push_back({{"path", path}, {"line", line_number}});
        if (matches.size() >= kResultCap) {
          stopped = "stopped early: " + std::to_string(kResultCap) + " matches";
          return false;
        }
      }
      at = end + 1;
    }
    if (truncated) {
      stopped = "stopped early: read " + std::to_string(kGrepBytesCap) + " bytes";
      return false;
    }
    return true;
  };
  std::string start = Arg(args, "path", ".");
  Result<FencedFile> dir = fence.OpenDirectory(start);
  if (!dir.ok() && dir.error().kind() != ErrorKind::kDenied) {
    Result<FencedFile> file = fence.OpenRead(start);
    if (!file.ok()) return FromError(ModeOf(fence), file.error());
    search(file->fd.get(), file->path);
  } else if (!dir.ok()) {
    return FromError(ModeOf(fence), dir.error());
  } else {
    std::string walk_stop = Walk(fence, std::move(dir).value(), [&](const Entry& entry) {
      if (entry.type != DT_REG) return true;
      if (!glob.empty() && ::fnmatch(glob.c_str(), entry.name.c_str(), 0) != 0) return true;
      UniqueFd fd(::openat(entry.dir_fd, entry.name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
      if (!fd) return true;
      struct stat st;
      if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return true;
      return search(fd.get(), entry.path);
    });
    if (stopped.empty()) stopped = walk_stop;
  }
  if (!stopped.empty()) out += "[" + stopped + "]\n";
  if (matches.empty() && stopped.empty()) out = "no match\n";
  return Ok(EscapeMarker(out), {{"matches", matches}, {"stopped_early", !stopped.empty()}});
}

ToolResult SandboxInfoTool(const Policy& policy, const nlohmann::json& approvals) {
  nlohmann::json roots = nlohmann::json::array();
  std::string text = "mode: " + std::string(ModeName(policy.mode())) + "\nnetwork: " +
                     std::string(policy.network_name()) + "\nroots:\n";
  for (const PathGrant& grant : policy.grants()) {
    PathView view = ViewOf(policy, grant.path.path);
    roots.push_back({{"path", grant.path.path},
                     {"access", AccessString(grant.access)},
                     {"view", PathViewName(view)},
                     {"origin", GrantOriginName(grant.origin)}});
    text += "  " + grant.path.path + " (" + std::string(PathViewName(view)) + ", " +
            std::string(GrantOriginName(grant.origin)) + ")\n";
  }
  nlohmann::json protected_paths = nlohmann::json::array();
  for (const ProtectedPath& entry : policy.protected_paths().paths) protected_paths.push_back(entry.path);
  text += "protected paths (read-only, never written by the tools): " + std::to_string(protected_paths.size()) +
          "; and anything inside a .git or .hg directory\n";
  text += "forbid_read: " + std::to_string(policy.forbid_patterns().size()) + " patterns; " +
          std::to_string(policy.masks().size()) + " hidden paths\n";
  text += "tools: " + approvals.dump() + "\n";
  nlohmann::json data = {{"mode", ModeName(policy.mode())},
                         {"network", policy.network_name()},
                         {"workspace", policy.workspace() ? policy.workspace()->path : ""},
                         {"roots", roots},
                         {"protected", protected_paths},
                         {"forbid_read", policy.forbid_patterns()},
                         {"tools", approvals},
                         {"fingerprint", policy.fingerprint()}};
  return Ok(text, EncodeBytes(data));
}

}  // namespace corral::tools
