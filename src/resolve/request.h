// ResolveRequest: every policy vocabulary, resolved into one PolicySpec.
//
// A request names what the caller asked for in any vocabulary the seeds use;
// the resolution layers them in a fixed order, each one able to narrow or
// override the ones before it as its own rules allow:
//
//   built-in defaults (workspace-write, no network, ...)
//   -> the user config file, then the project's corral.toml (narrow only)
//   -> a preset (safe, review, custom, danger): the deployment's default
//      mode and approval policy
//   -> or instead of config and preset: a profile (Deny/Gated/Allow per
//      dimension), optionally Restricted by a ceiling profile; its mode is
//      a ceiling that no later layer (or escalation) may widen
//   -> the session: its last sandbox/mode event beats the default mode, and
//      its cwd is the workspace root
//   -> the explicit overrides (CLI flags, MCP arguments): --mode beats the
//      session; grants add to what the layers above granted
//
// The result records which layer won the mode and the workspace, the
// approval policy, the preset state (derived "custom" when overridden), the
// Gated dimensions still needing a single-use grant, the config files read
// and the session, so `corral explain` can say why. Escalation is not part of
// resolution: it needs an approver and is decided per call (escalation.h).
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "config/config_file.h"
#include "policy/approval_policy.h"
#include "resolve/presets.h"
#include "resolve/resolution.h"
#include "state/session_log.h"
#include "policy/profile.h"
#include "policy/roots.h"
#include "policy/spec.h"

namespace corral {

// What the caller set explicitly; unset fields leave the layers' values.
struct SpecOverrides {
  std::optional<Mode> mode;
  bool acknowledge_danger = false;
  std::optional<std::string> workspace;
  bool no_workspace = false;
  // The list settings (policy/spec_fields.h): added to the layers' lists.
#define CORRAL_OVERRIDE_LIST(member, Adder, setting) std::vector<std::string> member;
  CORRAL_SANDBOX_LISTS(CORRAL_OVERRIDE_LIST)
#undef CORRAL_OVERRIDE_LIST
  std::optional<std::string> pin_sha256;
  // The scalar sandbox settings (policy/spec_fields.h): unset leaves the
  // layers' value; a switch (best_effort) can only be turned on.
#define CORRAL_OVERRIDE_MEMBER(member, Setter, setting) SettingOverride<setting> member{};
  CORRAL_SANDBOX_SETTINGS(CORRAL_OVERRIDE_MEMBER)
#undef CORRAL_OVERRIDE_MEMBER

  // True when any grant-shaped field is set (they conflict with a profile).
  bool HasGrants() const;
};

struct RunRequest {
  SpecOverrides overrides;
  // Config files: read unless no_config; user_config replaces the default
  // ~/.config/corral/config.toml path.
  bool no_config = false;
  std::optional<std::string> user_config;
  std::optional<std::string> preset;
  std::optional<ApprovalPolicy> approval;
  std::optional<std::string> session_id;
  std::optional<std::string> session_dir;  // default: DefaultSessionDir()
  std::optional<std::string> profile;       // a [profile] TOML file
  std::optional<std::string> profile_ceiling;
  // The user config file as this run first read it, or the error that read
  // gave (ReadUserConfigOnce): every later reader of the run takes it instead
  // of the file. Unset: each reader reads the file.
  std::shared_ptr<const Result<std::optional<ConfigLayer>>> user_layer;
};

struct ResolvedRequest {
  PolicySpec spec;
  Resolution resolution;     // which layer won the mode and the workspace
  ApprovalPolicy approval = ApprovalPolicy::kAllowAll;
  std::string approval_source;  // "flag", "config", "preset" or "default"
  std::optional<PermissionState> preset;
  std::vector<Dimension> gated;  // from a profile: each needs a grant before the spawn
  // From a profile: the widest mode it allows; an escalation beyond it is
  // refused before anyone is asked.
  std::optional<Mode> mode_ceiling;
  // Where the danger-full-access acknowledgement came from: "flag",
  // "config <file:line:col>" or "profile <file>"; empty when none was given.
  std::string danger_acknowledged_by;
  std::vector<std::string> config_files;
  std::optional<std::string> profile_fingerprint;
  std::optional<Session> session;
  // sandbox.backend from the user config: "auto", "native", "bubblewrap", ...
  std::string backend = "auto";
  // audit.trail from the user config ("-" or an absolute path); unset: the
  // state directory's trail.
  std::optional<std::string> audit_trail;
};

Result<ResolvedRequest> ResolveRequest(const RunRequest& request, const HostContext& host);

// audit.trail as the user config (the one `request` names, or the default)
// sets it, read before anything else: the trail is opened first. The
// project file is not read (it cannot set the key).
Result<std::optional<std::string>> ConfiguredAuditTrail(const RunRequest& request, const HostContext& host);

// Reads and parses the user config `request` names (or the default) once and
// keeps it in request.user_layer, so that ConfiguredAuditTrail and
// ResolveRequest do not read it again. Nothing to do under no_config; when it
// is already kept, returns what was kept. A file that cannot be read or parsed
// is the error, kept too: every later reader refuses with it, even if the
// file has been mended since.
Status ReadUserConfigOnce(RunRequest& request, const HostContext& host);

}  // namespace corral
