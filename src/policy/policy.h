// Policy: the one immutable description of what a confined command may touch.
//
// Every vocabulary (CLI grants, modes, profiles, TOML specs, presets) ends in a
// PolicyBuilder, and Build() is the only way to obtain a Policy. Build
// canonicalises and pins every path once, vets the workspace, merges nested
// grants, discovers the protected paths inside writable roots and the secrets
// to mask in /etc, and computes the fingerprint. A Policy has no setters.
//
//   PolicyBuilder builder(host);
//   builder.AllowRead("/srv/data").Network(NetworkMode::kNone);
//   CORRAL_ASSIGN_OR_RETURN(Policy policy, builder.Build());
//
// The fingerprint is the SHA-256 of the canonical JSON (CanonicalJson): the
// grants as the user asked for them, not host identities such as inodes.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "policy/access.h"
#include "policy/egress_rules.h"
#include "policy/mode.h"
#include "policy/path.h"
#include "policy/protected.h"
#include "policy/resource_limits.h"
#include "policy/roots.h"
#include "policy/spec.h"

namespace corral {

// Where a grant came from, as `explain` names it: "system", "workspace",
// "flag" (a grant flag or a front end's argument), "user-config" (the user
// config or a --config file), "project-config" (corral.toml), "home" (the
// home view) or "credential" (--allow-credential).
enum class GrantOrigin {
  kSystem, kWorkspace, kWorktree, kFlag, kHome, kCredential, kUserConfig, kProjectConfig, kToolchain, kUnixSocket,
  kScratch
};
// kWorktree: the repository of a workspace that is a linked worktree
// (policy/linked_worktree.h); kToolchain ("toolchain"): a directory of an
// --allow-toolchain name (policy/toolchains.h); kUnixSocket ("unix"): an
// --allow-unix socket (policy/unix_sockets.h); kScratch ("scratch"): an
// executor's own $HOME or $TMPDIR (PolicySpec::scratch_dirs).

std::string_view GrantOriginName(GrantOrigin origin);

struct PathGrant {
  PinnedPath path;
  Access access = Access::kNone;  // effective: includes what enclosing grants give
  GrantOrigin origin = GrantOrigin::kFlag;
};

enum class EtcView : uint8_t { kMasked, kAsOthers };

class Policy {
 public:
  // The spec this policy was built from.
  const PolicySpec& spec() const { return spec_; }
  Mode mode() const { return mode_; }
  // danger-full-access: the command runs with no sandbox at all.
  bool unconfined() const { return mode_ == Mode::kDangerFullAccess; }
  HomeMode home_mode() const { return home_mode_; }
  const std::optional<PinnedPath>& workspace() const { return workspace_; }
  // Sorted by path, parents before children. Includes system trees.
  const std::vector<PathGrant>& grants() const { return grants_; }
  const std::vector<SystemSymlink>& symlinks() const { return symlinks_; }
  // Hidden paths: /etc secrets, forbid_read matches, credential stores a grant shows.
  const std::vector<MaskedPath>& masks() const { return masks_; }
  // For a root caller: the top-level files and directories of the sandbox's
  // own /proc that others may not read (slabinfo, timer_list, kpageflags,
  // ...) are masked too. Which they are is read from that procfs when the
  // sandbox mounts it, not from the host's /proc (whose listing holds every
  // process of the host); DiscoverProcSecrets (policy/roots.h) lists them
  // from the host's for a backend that needs their names.
  bool masks_root_only_proc() const { return masks_root_only_proc_; }
  // How a root caller's /etc keeps its root-only files hidden. kAsOthers:
  // nothing of /etc is in masks(); the sandbox shows /etc through an
  // idmapped mount on which no file is root's, so every one reads as it
  // does for others (also one made during the run). Where the host cannot
  // idmap /etc, the plan walks it for the masks instead
  // (confine/etc_view.h). kMasked: what needs hiding is in masks() (every
  // caller but root, and root with a grant at or inside /etc).
  EtcView etc_view() const { return etc_view_; }
  // The forbid_read patterns, normalized (for the in-process fence).
  const std::vector<std::string>& forbid_patterns() const { return forbid_patterns_; }
  // Human notes on how the request was narrowed (e.g. by read-only mode).
  const std::vector<std::string>& notes() const { return notes_; }
  const ProtectedSet& protected_paths() const { return protected_; }
  NetworkMode network() const { return network_; }
  // The network as reports name it: "none", "all", or "ports" (--allow-port:
  // the host's network, TCP connect on those ports alone).
  std::string_view network_name() const;
  // Under --network none, the places corral's egress proxy lets the command
  // reach (policy/egress_rules.h); inactive without an --allow-host rule.
  const EgressRules& egress() const { return egress_; }
  // Variable names passed through besides the built-in allowlist.
  const std::vector<std::string>& env_allow() const { return env_allow_; }
  std::optional<std::chrono::seconds> timeout() const { return timeout_; }
  // The size of each private tmpfs (policy/tmpfs_size.h), in bytes.
  uint64_t tmpfs_size() const { return spec_.tmpfs_size; }
  // The resource limits (policy/resource_limits.h); none set by default.
  const ResourceLimits& limits() const { return limits_; }
  // The SHA-256 the program must hash to, if pinned.
  const std::optional<std::string>& pin_sha256() const { return pin_sha256_; }
  Enforcement enforcement() const { return enforcement_; }
  // The rungs (confine/rung.h names) the run may stand on without
  // --best-effort: --accept-rung and the user config's accept_rung.
  const std::vector<std::string>& accepted_rungs() const { return spec_.accept_rung; }
  // Where the workspace's writes go: the real tree, or a per-run overlay.
  // --overlay-root implies --overlay.
  WriteView write_view() const {
    return spec_.overlay || !spec_.overlay_root.empty() ? WriteView::kOverlay : WriteView::kDirect;
  }
  // The --overlay-root trees (write grants outside the workspace), overlaid
  // besides the workspace, in the order given.
  const std::vector<PinnedPath>& overlay_roots() const { return overlay_roots_; }
  const HostContext& host() const { return host_; }

  // Credential stores shown by --allow-credential (each is audited).
  std::vector<std::string> CredentialGrants() const;
  // The --allow-unix sockets, canonical.
  std::vector<std::string> UnixSockets() const;

  // The isolated, empty home directory's path inside the sandbox.
  const std::string& home() const { return host_.home; }
  // What the private home's .gitconfig holds: the user's git identity only
  // (policy/git_identity.h); "" when they have none, or the run is unconfined.
  const std::string& home_gitconfig() const { return home_gitconfig_; }

  // Roots the sandbox may write (workspace and write grants) where
  // protected paths are looked for: all but an executor's scratch.
  std::vector<std::string> WritableRoots() const;

  // The grant covering `path`, if any (the deepest one).
  const PathGrant* GrantFor(std::string_view path) const;

  const std::string& fingerprint() const { return fingerprint_; }
  // Deterministic JSON of the policy as asked for (sorted keys, no inodes).
  const std::string& CanonicalJson() const { return canonical_json_; }

 private:
  friend class PolicyBuilder;
  Policy() = default;

  PolicySpec spec_;
  HostContext host_;
  Mode mode_ = Mode::kWorkspaceWrite;
  HomeMode home_mode_ = HomeMode::kIsolated;
  std::vector<std::string> forbid_patterns_;
  std::vector<std::string> notes_;
  std::string home_gitconfig_;
  std::optional<PinnedPath> workspace_;
  std::vector<PinnedPath> overlay_roots_;
  std::vector<PathGrant> grants_;
  std::vector<SystemSymlink> symlinks_;
  std::vector<MaskedPath> masks_;
  bool masks_root_only_proc_ = false;
  EtcView etc_view_ = EtcView::kMasked;
  ProtectedSet protected_;
  NetworkMode network_ = NetworkMode::kNone;
  EgressRules egress_;
  std::vector<std::string> env_allow_;
  std::optional<std::chrono::seconds> timeout_;
  ResourceLimits limits_;
  std::optional<std::string> pin_sha256_;
  Enforcement enforcement_ = Enforcement::kRequired;
  std::string canonical_json_;
  std::string fingerprint_;
};

// The built-in environment allowlist.
const std::vector<std::string>& DefaultEnvAllowlist();

// Builds a Policy from a PolicySpec; the methods set one field each.
class PolicyBuilder {
 public:
  explicit PolicyBuilder(HostContext host, PolicySpec spec = {});

  // One method per list setting (spec_fields.h, where each one's meaning
  // and danger is said), each appending one element; errors surface from
  // Build(): AllowRead, AllowWrite, AllowExec (paths), AllowEnv (a name),
  // ForbidRead (a pattern that hides paths even inside granted trees, see
  // forbid.h) and AllowCredential, which is dangerous: it shows the
  // credential store `path` (home_view.h), read-only.
#define CORRAL_DECLARE_ADDER(member, Adder, setting) PolicyBuilder& Adder(std::string value);
  CORRAL_SANDBOX_LISTS(CORRAL_DECLARE_ADDER)
#undef CORRAL_DECLARE_ADDER
  // The project tree: read, write and exec. Default: the working directory.
  PolicyBuilder& Workspace(std::string dir);
  // No workspace at all: only the explicit grants and the system trees.
  PolicyBuilder& NoWorkspace();
  PolicyBuilder& PinSha256(std::string hex);
  // Leave out the default system trees (for tests and custom roots).
  PolicyBuilder& WithoutSystemRoots();
  // The sandbox mode; read-only makes every grant read-only.
  PolicyBuilder& SetMode(Mode mode);
  // Required for danger-full-access: the command will run unconfined.
  PolicyBuilder& AcknowledgeDangerFullAccess();
  // One setter per scalar sandbox setting (spec_fields.h, where each one's
  // meaning and danger is said): SetEnforcement(Enforcement), Home(HomeMode),
  // Network(NetworkMode), Timeout(std::chrono::seconds), TmpfsSize(uint64_t),
  // and the resource limits MaxProcs(uint64_t), MaxMemory(uint64_t bytes),
  // MaxCpuSeconds(std::chrono::seconds), MaxFileSize(uint64_t bytes),
  // MaxOpenFiles(uint64_t), MaxCpus(uint64_t thousandths of a CPU: 500 is half a core).
  // SetEnforcement(Enforcement::kBestEffort) is dangerous: the run goes
  // ahead on a host that cannot enforce everything.
#define CORRAL_DECLARE_SETTER(member, Setter, setting) PolicyBuilder& Setter(SettingArg<setting> value);
  CORRAL_SANDBOX_SETTINGS(CORRAL_DECLARE_SETTER)
#undef CORRAL_DECLARE_SETTER

  const PolicySpec& spec() const { return spec_; }
  Result<Policy> Build() const;

 private:
  HostContext host_;
  PolicySpec spec_;
};

// Builds the Policy for `spec`, as seen from `host`.
Result<Policy> BuildPolicy(const HostContext& host, const PolicySpec& spec);

// How the gate gets a request's Policy (gate::AdmitRequest::deriver): by
// BuildPolicy, or by a caller's own way to exactly its answer (an executor
// keeps the Policy of its last call while nothing it was derived from has
// changed: executor/policy_cache.h).
class PolicyDeriver {
 public:
  virtual ~PolicyDeriver() = default;
  virtual Result<Policy> Derive(const HostContext& host, const PolicySpec& spec) = 0;
};

}  // namespace corral
