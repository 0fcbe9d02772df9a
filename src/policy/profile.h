// Profiles: authority described as six Deny/Gated/Allow dimensions, plus
// Home and Isolation.
//
//   CORRAL_ASSIGN_OR_RETURN(Profile base, NewProfile(config));
//   Profile effective = Restrict(base, ceiling);   // never wider than either
//   CORRAL_ASSIGN_OR_RETURN(ProfileSpec mapped, ToPolicySpec(effective));
//   // admit every dimension in mapped.gated with a single-use grant, then
//   // BuildPolicy(host, mapped.spec)
//
// Access levels are ordered kDeny < kGated < kAllow. Gated is a policy
// decision made before a child exists: the dimension is available only with a
// single-use grant for that spawn.
//
// NewProfile validates and normalises; it never widens what the config says:
//   - every root is an absolute, canonical path (slashes collapsed; relative
//     paths, "." and "..", control characters refused). Roots nested in other
//     roots of the same list are dropped, and the list is sorted;
//   - write implies read, and corral REFUSES rather than raises: a
//     workspace_write above workspace_read, a host_write above host_read, or a
//     host_write root outside every host_read root is an error (code
//     "profile_write_without_read"). Raising the read level would grant
//     something the author explicitly denied;
//   - workspace_root is required unless both workspace dimensions are Deny
//     (code "profile_missing_workspace_root"); with both Deny it is cleared;
//   - host_read / host_write above Deny need at least one root (code
//     "profile_missing_roots"); at Deny their roots are cleared;
//   - isolation = unconfined needs acknowledge_unconfined (code
//     "unconfined_not_acknowledged"). Under sandboxed isolation the
//     acknowledgement is meaningless and is cleared.
// Every error is ErrorKind::kUsage with the code above (or "profile_bad_path").
// Normalising makes equal authority compare equal and fingerprint equal.
//
// Restrict(base, ceiling) is the component-wise intersection (a lattice meet):
// the minimum of each access level; isolated home unless both are real;
// sandboxed unless both are unconfined (and then acknowledged); the deeper of
// two nested workspace roots (none when they are disjoint, which makes both
// workspace dimensions Deny); host roots intersect path-wise (a root survives
// only where both lists cover it). It is commutative, associative and
// idempotent, and the result is never wider than either input.
//
// ToPolicySpec maps a profile onto the one schema, PolicySpec. The mapping:
//   command Deny                 -> refused: no child process at all
//                                   (ErrorKind::kPolicy, code "command_denied")
//   isolation unconfined         -> mode danger-full-access with
//                                   acknowledge_danger. The OS boundary is
//                                   gone, so a profile that still Denies a
//                                   workspace, host or network dimension would
//                                   claim a limit nobody enforces: refused
//                                   (code "profile_not_expressible")
//   workspace read and write Deny -> no_workspace
//   workspace_read above Deny    -> workspace = workspace_root (read, write and
//                                   exec, narrowed by the mode)
//   workspace_write above Deny   -> mode workspace-write
//   workspace_write Deny         -> mode read-only, unless host_write is above
//                                   Deny: read-only mode would also drop the
//                                   host writes, and widening the workspace is
//                                   not an option, so a readable workspace with
//                                   host writes is refused
//                                   (code "profile_not_expressible")
//   workspace Deny, host_write above Deny -> mode workspace-write
//   host_read above Deny         -> allow_read = host_read_roots (no exec)
//   host_write above Deny        -> allow_write = host_write_roots
//   network Allow or Gated       -> NetworkMode::kAll; Deny -> kNone
//   home                         -> spec.home
// A Gated dimension maps exactly like Allow and is listed in
// ProfileSpec::gated: `spec` is the authority the spawn has once every gated
// dimension is admitted. A caller without those grants must not spawn.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "policy/spec.h"

namespace corral {

// One dimension's access level, ordered narrowest first.
enum class Access3 { kDeny, kGated, kAllow };
std::string_view Access3Name(Access3 access);           // "deny", "gated", "allow"
std::optional<Access3> ParseAccess3(std::string_view text);

enum class Isolation {
  kSandboxed,   // confined by the OS sandbox (narrower)
  kUnconfined,  // no sandbox at all; needs acknowledge_unconfined
};
std::string_view IsolationName(Isolation isolation);  // "sandboxed", "unconfined"
std::optional<Isolation> ParseIsolation(std::string_view text);

enum class Dimension { kWorkspaceRead, kWorkspaceWrite, kHostRead, kHostWrite, kNetwork, kCommand };
inline constexpr std::array<Dimension, 6> kAllDimensions = {
    Dimension::kWorkspaceRead, Dimension::kWorkspaceWrite, Dimension::kHostRead,
    Dimension::kHostWrite,     Dimension::kNetwork,        Dimension::kCommand,
};
std::string_view DimensionName(Dimension dimension);  // "workspace_read", ...

// What a profile author writes. Every dimension defaults to Deny.
struct ProfileConfig {
  std::string workspace_root;  // absolute; empty = no workspace
  Access3 workspace_read = Access3::kDeny;
  Access3 workspace_write = Access3::kDeny;
  Access3 host_read = Access3::kDeny;
  Access3 host_write = Access3::kDeny;
  Access3 network = Access3::kDeny;
  Access3 command = Access3::kDeny;
  HomeMode home = HomeMode::kIsolated;
  Isolation isolation = Isolation::kSandboxed;
  // Required for isolation = unconfined: the command runs with no sandbox.
  bool acknowledge_unconfined = false;
  std::vector<std::string> host_read_roots;   // what host_read refers to
  std::vector<std::string> host_write_roots;  // what host_write refers to

  bool operator==(const ProfileConfig&) const = default;
};

// A validated, normalised profile. Immutable: obtained only from NewProfile
// and Restrict.
class Profile {
 public:
  // The normalised configuration (round-trips through NewProfile unchanged).
  const ProfileConfig& config() const { return config_; }
  Access3 access(Dimension dimension) const;
  const std::string& workspace_root() const { return config_.workspace_root; }
  HomeMode home() const { return config_.home; }
  Isolation isolation() const { return config_.isolation; }
  const std::vector<std::string>& host_read_roots() const { return config_.host_read_roots; }
  const std::vector<std::string>& host_write_roots() const { return config_.host_write_roots; }

  bool operator==(const Profile&) const = default;

 private:
  friend Result<Profile> NewProfile(const ProfileConfig& config);
  friend Profile Restrict(const Profile& base, const Profile& ceiling);
  explicit Profile(ProfileConfig config) : config_(std::move(config)) {}
  ProfileConfig config_;
};

// Validates and normalises (see the top of this file).
Result<Profile> NewProfile(const ProfileConfig& config);

// The component-wise intersection; never wider than `base` or `ceiling`.
Profile Restrict(const Profile& base, const Profile& ceiling);

// True when `narrower` grants nothing that `wider` does not, component by
// component (roots: each of narrower's lies inside one of wider's). Computed
// independently of Restrict.
bool IsNarrowerOrEqual(const Profile& narrower, const Profile& wider);

// Deterministic JSON of the normalised profile (sorted keys, sorted roots).
std::string CanonicalProfileJson(const Profile& profile);
// Lower-case hex SHA-256 of CanonicalProfileJson.
std::string Fingerprint(const Profile& profile);

struct ProfileSpec {
  PolicySpec spec;               // the authority once every gated dimension is admitted
  std::vector<Dimension> gated;  // needs a single-use grant before a spawn, in kAllDimensions order
};

// Maps onto the one schema (see the mapping table at the top of this file).
Result<ProfileSpec> ToPolicySpec(const Profile& profile);

}  // namespace corral
