#include "policy/git_config_check.h"

#include <algorithm>
#include <set>

namespace corral {
namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t'; }
bool IsAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
char Lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

Error Unreadable(int line, const std::string& why) {
  return Error(ErrorKind::kConfig, "line " + std::to_string(line) + ": " + why);
}

// A name git accepts for a section or a key: letters, digits and '-'
// (a key starts with a letter). Returned in lower case, "" when none.
std::string NameAt(std::string_view text, size_t* at, bool key) {
  std::string name;
  while (*at < text.size() && (IsAlpha(text[*at]) || IsDigit(text[*at]) || text[*at] == '-')) {
    name += Lower(text[(*at)++]);
  }
  if (key && !name.empty() && !IsAlpha(name[0])) return {};
  return name;
}

// The rest of a line after a header or a value: blanks, then an optional
// comment.
bool OnlyCommentLeft(std::string_view text, size_t at) {
  while (at < text.size() && IsSpace(text[at])) ++at;
  return at == text.size() || text[at] == '#' || text[at] == ';';
}

// `[section]` or `[section "subsection"]`, from the '['.
Result<void> Header(std::string_view text, int line, std::string* section, std::string* subsection) {
  size_t at = 1;
  *section = NameAt(text, &at, false);
  subsection->clear();
  if (section->empty()) return Unreadable(line, "a section header without a name");
  if (at < text.size() && text[at] == '.') return Unreadable(line, "an old-style [section.subsection] header");
  if (at < text.size() && IsSpace(text[at])) {
    while (at < text.size() && IsSpace(text[at])) ++at;
    if (at == text.size() || text[at] != '"') return Unreadable(line, "a section header git would not read");
    ++at;
    for (;;) {
      if (at == text.size()) return Unreadable(line, "an unterminated subsection name");
      char c = text[at++];
      if (c == '"') break;
      if (c == '\\') {
        if (at == text.size()) return Unreadable(line, "an unterminated subsection name");
        c = text[at++];
      }
      *subsection += c;
    }
  }
  if (at == text.size() || text[at] != ']') return Unreadable(line, "a section header git would not read");
  if (!OnlyCommentLeft(text, at + 1)) return Unreadable(line, "text after a section header");
  return {};
}

// A value after '=', with git's quoting and escapes; a trailing backslash
// (a continuation line) is refused.
Result<std::string> Value(std::string_view text, size_t at, int line) {
  std::string value;
  size_t kept = 0;  // value's length up to its last character that is not trailing blank
  bool quoted = false;
  while (at < text.size() && IsSpace(text[at])) ++at;
  for (; at < text.size(); ++at) {
    char c = text[at];
    if (!quoted && (c == '#' || c == ';')) break;
    if (c == '"') {
      quoted = !quoted;
      kept = value.size();
      continue;
    }
    if (c == '\\') {
      if (++at == text.size()) return Unreadable(line, "a continuation line");
      switch (text[at]) {
        case 'n': value += '\n'; break;
        case 't': value += '\t'; break;
        case 'b': value += '\b'; break;
        case '\\': value += '\\'; break;
        case '"': value += '"'; break;
        default: return Unreadable(line, "an escape git does not know");
      }
      kept = value.size();
      continue;
    }
    value += !quoted && c == '\t' ? ' ' : c;  // git reads a blank outside quotes as a space
    if (quoted || !IsSpace(c)) kept = value.size();
  }
  if (quoted) return Unreadable(line, "an unterminated quote");
  value.resize(kept);
  return value;
}

bool SafeUrl(const std::string& url) {
  return !url.empty() && url.front() != '-' && url.find("::") == std::string::npos &&
         std::none_of(url.begin(), url.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20; });
}

}  // namespace

std::string GitConfigEntry::Name() const {
  return subsection.empty() ? section + "." + key : section + "." + subsection + "." + key;
}

Result<std::vector<GitConfigEntry>> ParseGitConfig(std::string_view text) {
  std::vector<GitConfigEntry> entries;
  std::string section, subsection;
  int line = 0;
  for (size_t start = 0; start < text.size();) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view raw = text.substr(start, end - start);
    start = end + 1;
    ++line;
    for (char c : raw) {
      if (c != '\t' && static_cast<unsigned char>(c) < 0x20) {
        return Unreadable(line, "a control character (a CR or a NUL included)");
      }
      if (c == 0x7f) return Unreadable(line, "a control character");
    }
    size_t at = 0;
    while (at < raw.size() && IsSpace(raw[at])) ++at;
    std::string_view body = raw.substr(at);
    if (body.empty() || body.front() == '#' || body.front() == ';') continue;
    if (body.front() == '[') {
      Result<void> header = Header(body, line, &section, &subsection);
      if (!header) return std::move(header).error();
      continue;
    }
    if (section.empty()) return Unreadable(line, "a key before any section");
    size_t pos = 0;
    GitConfigEntry entry{section, subsection, NameAt(body, &pos, true), {}, line};
    if (entry.key.empty()) return Unreadable(line, "a key git would not read");
    while (pos < body.size() && IsSpace(body[pos])) ++pos;
    if (pos < body.size() && body[pos] == '=') {
      Result<std::string> value = Value(body, pos + 1, line);
      if (!value) return std::move(value).error();
      entry.value = std::move(*value);
    } else if (pos == body.size()) {  // git refuses a comment after a bare key
      entry.bare = true;
    } else {
      return Unreadable(line, "a key git would not read");
    }
    entries.push_back(std::move(entry));
  }
  return entries;
}

std::string UnsafeGitConfigEntry(const GitConfigEntry& entry) {
  static const std::set<std::string> plain = {
      "core.repositoryformatversion", "core.filemode", "core.bare", "core.logallrefupdates", "core.ignorecase",
      "core.precomposeunicode", "core.symlinks", "extensions.objectformat", "user.name", "user.email",
      "init.defaultbranch",
  };
  static const std::set<std::string> remote = {"url", "pushurl", "fetch", "push", "tagopt", "prune"};
  static const std::set<std::string> branch = {"remote", "merge", "rebase", "pushremote", "description"};
  std::string where = entry.Name() + (entry.line > 0 ? " (line " + std::to_string(entry.line) + ")" : "");
  bool safe = entry.subsection.empty() ? plain.contains(entry.section + "." + entry.key)
              : entry.section == "remote"  ? remote.contains(entry.key)
              : entry.section == "branch"  ? branch.contains(entry.key)
                                           : false;
  if (!safe) return where + " is not on the safe list";
  // branch.<name>.remote and pushremote may hold a URL instead of a remote's
  // name, and git fetches and pushes there: judged as a remote's URL is.
  const bool url = entry.section == "remote" ? entry.key == "url" || entry.key == "pushurl"
                   : entry.section == "branch" && (entry.key == "remote" || entry.key == "pushremote");
  if (url && !SafeUrl(entry.value)) {
    return where + " names a transport or an option, not a plain URL";
  }
  return {};
}

std::string UnsafeGitConfigKey(const std::vector<GitConfigEntry>& entries) {
  for (const GitConfigEntry& entry : entries) {
    std::string why = UnsafeGitConfigEntry(entry);
    if (!why.empty()) return why;
  }
  return {};
}

std::string UnsafeGitConfig(std::string_view text) {
  Result<std::vector<GitConfigEntry>> entries = ParseGitConfig(text);
  if (!entries) return "its config cannot be read exactly as git would (" + entries.error().message() + ")";
  return UnsafeGitConfigKey(*entries);
}

}  // namespace corral
