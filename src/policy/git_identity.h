// The git identity a run gets in its private home: the user's user.name,
// user.email and init.defaultBranch, and nothing else of their git config
// (no alias, helper, include, credential or signing key reaches the
// sandbox).
//
// Read on the host from ~/.config/git/config and then ~/.gitconfig (the
// order git reads them in: the later value wins), each the user's own file
// (a symlink into their dotfiles is followed), opened non-blocking, a
// regular file only, at most kMaxGitFileBytes. `include.path` is not
// followed: an identity kept in an included file is not found. A file git's
// syntax does not allow as policy/git_config_check.h reads it, or a value
// with a control character or over 256 bytes, gives nothing from that file
// or for that key. The result is a gitconfig corral writes itself, each
// value quoted and escaped; "" when the user has none of the three keys.
//
//   std::string text = GitIdentityConfig("/home/ana");
//   // [user]\n\tname = "Ana"\n\temail = "ana@example.com"\n
#pragma once

#include <string>

namespace corral {

std::string GitIdentityConfig(const std::string& home);

}  // namespace corral
