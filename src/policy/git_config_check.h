// Judging a git config file that a confined run wrote, before the host's git
// reads it: which keys could make a host git run something later.
//
// git runs code named in its config in many places (core.fsmonitor,
// core.hooksPath, core.sshCommand, core.pager, core.editor, filters,
// textconv, diff.external, `!` aliases, credential helpers, gpg.program,
// uploadpack/receivepack, protocol.*.allow, include and includeIf, ...), and
// the list grows with each release. So this is an allowlist: a config is
// safe only when every key in it is one that names data, never a program:
//
//   core.repositoryformatversion, core.filemode, core.bare,
//   core.logallrefupdates, core.ignorecase, core.precomposeunicode,
//   core.symlinks, extensions.objectformat,
//   remote.<name>.url / pushurl (no "::" transport, no leading "-"),
//   remote.<name>.fetch / push / tagopt / prune,
//   branch.<name>.remote / pushremote (as a URL: no "::", no leading "-"),
//   branch.<name>.merge / rebase / description,
//   user.name, user.email, init.defaultbranch.
//
// The reader follows git's syntax conservatively: `[section]` and
// `[section "subsection"]` headers (names case-insensitive, subsections
// case-sensitive, `\"` and `\\` escapes), `key = value` and a bare `key`,
// quoted values with git's escapes, `#` and `;` comments. What it does not
// read exactly as git does is refused rather than guessed: a continuation
// line (a value ending in `\`), an old-style `[section.sub]` header, text
// after a header, anything after a bare key (a comment included, which git
// refuses), an unknown escape, an unterminated quote, a control character,
// a CR or a NUL.
//
//   Result<std::vector<GitConfigEntry>> entries = ParseGitConfig(text);
//   std::string why = UnsafeGitConfigKey(*entries);  // "" when all are safe
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace corral {

struct GitConfigEntry {
  std::string section;     // lower case
  std::string subsection;  // as written (case-sensitive); empty when none
  std::string key;         // lower case
  std::string value;       // unquoted and unescaped; "" for a bare key
  int line = 0;
  bool bare = false;       // `key` with no `=` (git reads it as true)

  // "remote.origin.url", "core.fsmonitor"
  std::string Name() const;
};

// Every entry, in file order; an error names the line git's syntax (as read
// here) does not allow.
Result<std::vector<GitConfigEntry>> ParseGitConfig(std::string_view text);

// "" when `entry` is on the safe list (a key that names data, never a
// program; for a URL, a plain one); otherwise why not, naming the key
// ("core.fsmonitor (line 6) is not on the safe list"). The one list: a fresh
// repository's config (repair/fresh_repository.h) and the keys a run may
// change in an existing one (repair/git_config_stage.h) are both judged here.
std::string UnsafeGitConfigEntry(const GitConfigEntry& entry);

// "" when every entry is on the safe list; otherwise why the first one that
// is not makes the config unsafe ("core.fsmonitor is not on the safe list").
std::string UnsafeGitConfigKey(const std::vector<GitConfigEntry>& entries);

// Both at once: "" for a config a host git can read without running anything
// it names, otherwise why not (a parse error counts as unsafe).
std::string UnsafeGitConfig(std::string_view text);

}  // namespace corral
