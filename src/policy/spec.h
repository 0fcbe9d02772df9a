// PolicySpec: the one schema every vocabulary fills in.
//
// CLI flags, the TOML [sandbox] table, profiles, presets and MCP arguments all
// produce a PolicySpec; BuildPolicy turns it into the immutable Policy. Each
// field documents its default, the flag and the config key that set it. A
// field added here is added to docs/config.md and to every front end.
#pragma once

#include <chrono>
#include <string_view>
#include <optional>
#include <string>
#include <vector>

#include "policy/mode.h"
#include "policy/tmpfs_size.h"

namespace corral {

enum class NetworkMode {
  kNone,  // an empty network namespace with only lo, and no INET sockets
  kAll,   // the host's network namespace
};
std::string_view NetworkModeName(NetworkMode mode);

// What $HOME shows inside the sandbox.
enum class HomeMode {
  kIsolated,  // an empty tmpfs (the default)
  kReal,      // the isolated home plus the real home's toolchains and caches, read-only (home_view.h)
};
std::string_view HomeModeName(HomeMode mode);

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
  // --allow-read / --allow-write / --allow-exec, sandbox.allow_read /
  // allow_write / allow_exec. Default empty.
  std::vector<std::string> allow_read;
  std::vector<std::string> allow_write;
  std::vector<std::string> allow_exec;
  // --allow-credential. Default empty. Read grants of credential stores
  // (policy/home_view.h) that every other grant hides; each is audited and
  // said on stderr. Not a config key: a credential is shown one run at a
  // time, by the person typing the command.
  std::vector<std::string> allow_credential;
  // --forbid-read / sandbox.forbid_read. Default empty. Paths or globs hidden
  // even inside granted trees (see policy/forbid.h).
  std::vector<std::string> forbid_read;
  // --allow-env / sandbox.allow_env. Default empty (the built-in allowlist
  // still applies).
  std::vector<std::string> allow_env;
  // --network / sandbox.network. Default none.
  NetworkMode network = NetworkMode::kNone;
  // --timeout / sandbox.timeout (seconds). Default: no limit.
  std::optional<std::chrono::seconds> timeout;
  // --pin-sha256. Default: not pinned. (Not a config key: it names one program.)
  std::optional<std::string> pin_sha256;
  // --best-effort / sandbox.best_effort. Default false.
  bool best_effort = false;
  // --home / sandbox.home. Default isolated.
  HomeMode home = HomeMode::kIsolated;
  // --tmpfs-size / sandbox.tmpfs_size (bytes). Default 1g: the size of /tmp
  // and the isolated $HOME each, a quarter of it for /dev/shm (see
  // policy/tmpfs_size.h).
  uint64_t tmpfs_size = kDefaultTmpfsSize;
  // Not a user setting: leaves out the system trees (tests, custom roots).
  bool system_roots = true;
  // Not a user setting: files corral itself trusts that the command line
  // named (a --config, --profile or --audit file). Hidden like forbid_read.
  std::vector<std::string> own_files;

  bool operator==(const PolicySpec&) const = default;
};

}  // namespace corral
