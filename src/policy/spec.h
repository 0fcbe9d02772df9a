// PolicySpec: the one schema every vocabulary fills in.
//
// CLI flags, the TOML [sandbox] table, profiles, presets and MCP arguments all
// produce a PolicySpec; BuildPolicy turns it into the immutable Policy. The
// scalar sandbox settings (network, timeout, tmpfs_size, best_effort, home)
// and the lists (the path grants, allow_env, forbid_read, allow_credential)
// are described once in spec_fields.h and every front end is expanded from
// there: a new one is an entry there, not a member here. The other fields
// below document their default, the flag and the config key that set them,
// and spec_fields.h says why each is still written by hand.
#pragma once

#include <chrono>
#include <string_view>
#include <optional>
#include <string>
#include <vector>

#include "policy/mode.h"
#include "policy/spec_fields.h"

namespace corral {

struct PolicySpec {
  // --mode / sandbox.mode. Default workspace-write.
  Mode mode = Mode::kWorkspaceWrite;
  // --i-understand-danger-full-access / sandbox.i_understand_danger_full_access.
  // Default false. Required for danger-full-access.
  bool acknowledge_danger = false;
  // --workspace / sandbox.workspace_root. Default: the working directory.
  std::optional<std::string> workspace;
  // --no-workspace. Default false.
  bool no_workspace = false;
  // The list settings: allow_read, allow_write, allow_exec, allow_env,
  // forbid_read (also config keys) and allow_credential (flag only), each
  // empty by default and described in spec_fields.h.
#define CORRAL_SPEC_LIST(member, Adder, setting) std::vector<std::string> member;
  CORRAL_SANDBOX_LISTS(CORRAL_SPEC_LIST)
#undef CORRAL_SPEC_LIST
  // --pin-sha256. Default: not pinned. (Not a config key: it names one program.)
  std::optional<std::string> pin_sha256;
  // The scalar sandbox settings: network, timeout, tmpfs_size, best_effort,
  // home, with the defaults spec_fields.h gives them.
#define CORRAL_SPEC_MEMBER(member, Setter, setting) SettingSpecType<setting> member = setting.spec_default;
  CORRAL_SANDBOX_SETTINGS(CORRAL_SPEC_MEMBER)
#undef CORRAL_SPEC_MEMBER
  // Not a user setting: leaves out the system trees (tests, custom roots).
  bool system_roots = true;
  // Not a user setting: files corral itself trusts that the command line
  // named (a --config, --profile or --audit file). Hidden like forbid_read.
  std::vector<std::string> own_files;
  // Not a user setting: an executor's own $HOME and $TMPDIR
  // (executor/scratch.h), granted read-write like --allow-write. The calls
  // of one executor share them, and nothing outside the sandbox runs from
  // them, so no protected path is looked for, bound read-only or swept
  // there (a `git config --global` one call makes stays for the next);
  // forbid_read hides in them as in any grant.
  std::vector<std::string> scratch_dirs;
  // Not a user setting: the path grants a config file wrote (canonical
  // text), the user's and the project's, so each grant can say where it came
  // from (GrantOrigin); a grant here that a flag names too is the flag's.
  std::vector<std::string> user_config_grants;
  std::vector<std::string> project_config_grants;

  bool operator==(const PolicySpec&) const = default;
};

}  // namespace corral
