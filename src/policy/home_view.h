// What of the caller's home a sandbox sees.
//
// Two lists, two layers:
//   - HomeAllowlist: with --home real, the sandbox's $HOME is the private,
//     empty one of --home isolated plus these entries of the real home, each
//     read-only: toolchains (read and exec: ~/.cargo/bin, ~/.rustup,
//     ~/.pyenv, ...) and package caches (read only: ~/.cargo/registry,
//     ~/go/pkg/mod, ...). Everything else in the home (dotfiles, ~/.env,
//     ~/.config, projects) stays hidden unless a grant names it.
//   - HomeCredentialPatterns: credential stores hidden inside any grant that
//     shows them (--allow-read ~ shows the home, not ~/.ssh). A grant that
//     names one, or lies inside one, is refused unless --allow-credential
//     names it: a loud flag with its own audit record and stderr line.
//
// Both hold exact paths relative to the home ("~/..."), never globs: a glob
// would walk the whole home on every run.
#pragma once

#include <string>
#include <vector>

#include "policy/access.h"

namespace corral {

struct HomeEntry {
  std::string path;  // "~/..."
  Access access = Access::kRead;
};

// The entries --home real shows, when they exist and are not symlinks.
const std::vector<HomeEntry>& HomeAllowlist();

// Credential stores, hidden wherever a grant would show them.
const std::vector<std::string>& HomeCredentialPatterns();

}  // namespace corral
