// Policy resolution: which sandbox mode and workspace one call runs under.
//
// Every consumer (the CLI, the tools, the MCP server) resolves through a
// PolicyService, so none re-implements the precedence:
//   mode            explicit override  >  the session's last sandbox/mode
//                   event  >  the deployment default;
//   workspace root  the session's cwd  >  the configured fallback root.
//
//   PolicyService service(Mode::kReadOnly, "/srv/fallback");
//   ExecutionPolicy policy = service.Resolve({.session = &session});
//   if (policy.IsDanger()) { ... run unconfined, audited ... }
//   CORRAL_ASSIGN_OR_RETURN(PolicySpec spec, policy.ToConfined());
//
// Security: an override wins over everything, including a session that was
// narrowed to read-only, so only the user (a CLI flag) or an approved
// escalation may set one. danger-full-access cannot be confined: ToConfined
// refuses it (the caller must branch on IsDanger first), and it still needs
// the user's acknowledgement, which resolution never supplies.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "base/result.h"
#include "state/session_log.h"
#include "policy/mode.h"
#include "policy/spec.h"

namespace corral {

// What one call runs under: the tuple every consumer shares.
struct ExecutionPolicy {
  Mode mode = Mode::kReadOnly;
  // The boundary of workspace-write; nullopt when neither layer gave one.
  std::optional<std::string> workspace_root;
  std::optional<std::string> session_id;

  bool IsDanger() const { return mode == Mode::kDangerFullAccess; }
  // A PolicySpec with mode and workspace set (the other fields default).
  // danger-full-access: ErrorKind::kPolicy, code "cannot_confine_danger".
  Result<PolicySpec> ToConfined() const;

  bool operator==(const ExecutionPolicy&) const = default;
};

// Which layer decided each part, for the report and the audit trail.
enum class ModeLayer { kOverride, kSession, kDefault };
// kOverride: an explicit workspace (--workspace), set by ResolveRequest.
enum class RootLayer { kOverride, kSession, kFallback, kCwd, kRepository, kNone };
// kCwd: no layer named one, so the workspace is the working directory.
// kRepository: no layer named one, and the working directory lies inside a
// git repository, whose top is the workspace (resolve/repository_top.h).
std::string_view ModeLayerName(ModeLayer layer);  // "override", "session", "default"
std::string_view RootLayerName(RootLayer layer);  // "override", "session", "fallback", "cwd", "repository", "none"

struct Resolution {
  ExecutionPolicy policy;
  ModeLayer mode_layer = ModeLayer::kDefault;
  RootLayer root_layer = RootLayer::kNone;
  // Set when mode_layer is kSession: who recorded that mode.
  std::optional<ModeSource> session_source;
  // Why the top of the repository the working directory is in was not taken
  // as the workspace (resolve/repository_top.h); empty when none was refused.
  std::string root_note;

  // One line, e.g. "mode workspace-write (from the session, set by user);
  // workspace /src/app (from the session)".
  std::string Describe() const;
};

struct PolicyRequest {
  std::optional<Mode> override_mode;  // --mode, or an approved escalation for one call
  const Session* session = nullptr;   // --session; nullptr when agentless
};

class PolicyService {
 public:
  PolicyService(Mode default_mode, std::optional<std::string> fallback_root);

  ExecutionPolicy Resolve(const PolicyRequest& request) const;
  // Resolve, saying which layer won.
  Resolution Explain(const PolicyRequest& request) const;

  Mode default_mode() const { return default_mode_; }
  const std::optional<std::string>& fallback_root() const { return fallback_root_; }

 private:
  Mode default_mode_;
  std::optional<std::string> fallback_root_;
};

}  // namespace corral
