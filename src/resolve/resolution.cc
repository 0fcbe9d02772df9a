#include "resolve/resolution.h"

#include "base/invariant.h"

namespace corral {

Result<PolicySpec> ExecutionPolicy::ToConfined() const {
  if (IsDanger()) {
    return Error(ErrorKind::kPolicy,
                 "cannot confine a danger-full-access policy: it runs unconfined, so check IsDanger() first")
        .WithCode("cannot_confine_danger");
  }
  PolicySpec spec;
  spec.mode = mode;
  spec.workspace = workspace_root;
  return spec;
}

std::string_view ModeLayerName(ModeLayer layer) {
  switch (layer) {
    case ModeLayer::kOverride: return "override";
    case ModeLayer::kSession: return "session";
    case ModeLayer::kDefault: return "default";
  }
  return "default";
}

std::string_view RootLayerName(RootLayer layer) {
  switch (layer) {
    case RootLayer::kOverride: return "override";
    case RootLayer::kSession: return "session";
    case RootLayer::kFallback: return "fallback";
    case RootLayer::kCwd: return "cwd";
    case RootLayer::kRepository: return "repository";
    case RootLayer::kNone: return "none";
  }
  return "none";
}

std::string Resolution::Describe() const {
  std::string text = "mode " + std::string(ModeName(policy.mode));
  switch (mode_layer) {
    case ModeLayer::kOverride: text += " (explicit override)"; break;
    case ModeLayer::kSession:
      text += " (from the session";
      if (session_source) text += ", set by " + std::string(ModeSourceName(*session_source));
      text += ")";
      break;
    case ModeLayer::kDefault: text += " (the default)"; break;
  }
  text += "; workspace ";
  switch (root_layer) {
    case RootLayer::kOverride: text += *policy.workspace_root + " (explicit override)"; break;
    case RootLayer::kSession: text += *policy.workspace_root + " (the session's cwd)"; break;
    case RootLayer::kFallback: text += *policy.workspace_root + " (the fallback root)"; break;
    case RootLayer::kCwd: text += *policy.workspace_root + " (the working directory)"; break;
    case RootLayer::kRepository:
      text += *policy.workspace_root + " (the top of the git repository the working directory is in)";
      break;
    case RootLayer::kNone: text += "none"; break;
  }
  if (!root_note.empty()) text += " (" + root_note + ")";
  return text;
}

PolicyService::PolicyService(Mode default_mode, std::optional<std::string> fallback_root)
    : default_mode_(default_mode), fallback_root_(std::move(fallback_root)) {}

ExecutionPolicy PolicyService::Resolve(const PolicyRequest& request) const { return Explain(request).policy; }

Resolution PolicyService::Explain(const PolicyRequest& request) const {
  Resolution resolution;
  std::optional<SandboxModeData> logged;
  if (request.session != nullptr) logged = EffectiveSandboxMode(request.session->events());

  if (request.override_mode) {
    resolution.policy.mode = *request.override_mode;
    resolution.mode_layer = ModeLayer::kOverride;
  } else if (logged) {
    resolution.policy.mode = logged->mode;
    resolution.mode_layer = ModeLayer::kSession;
    resolution.session_source = logged->source;
  } else {
    resolution.policy.mode = default_mode_;
    resolution.mode_layer = ModeLayer::kDefault;
  }
  CORRAL_INVARIANT(ParseMode(ModeName(resolution.policy.mode)) == resolution.policy.mode,
                   "resolved sandbox mode is not one of the three");

  if (request.session != nullptr && !request.session->cwd().empty()) {
    resolution.policy.workspace_root = request.session->cwd();
    resolution.root_layer = RootLayer::kSession;
  } else if (fallback_root_) {
    resolution.policy.workspace_root = fallback_root_;
    resolution.root_layer = RootLayer::kFallback;
  }
  if (request.session != nullptr) resolution.policy.session_id = request.session->id();
  return resolution;
}

}  // namespace corral
