// Profiles in TOML: one [profile] table, read as strictly as the config files
// (same error format: file:line:column: key: what, ErrorKind::kConfig).
//
//   [profile]
//   workspace_root  = "~/src/app"      # "~" expands; relative paths are refused
//   workspace_read  = "allow"          # "deny" (default), "gated" or "allow"
//   workspace_write = "gated"
//   host_read       = "allow"
//   host_read_roots = ["/srv/data"]
//   host_write      = "deny"
//   host_write_roots = []
//   network         = "deny"
//   command         = "allow"
//   home            = "isolated"       # or "real"
//   isolation       = "sandboxed"      # or "unconfined" (needs the next key)
//   acknowledge_unconfined = false
//
// Every key is optional and defaults as ProfileConfig does (every dimension
// Deny). After the keys are read, NewProfile validates the whole; its refusal
// is reported at the [profile] table with NewProfile's code kept.
#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>

#include "base/result.h"
#include "policy/profile.h"

namespace corral {

Result<Profile> ParseProfileText(std::string_view text, const std::string& file, const std::string& home);

// Reads `path` (which must exist, belong to `caller` or root, and not be
// writable by group or others) and parses it.
Result<Profile> LoadProfileFile(const std::string& path, const std::string& home, uid_t caller);

}  // namespace corral
