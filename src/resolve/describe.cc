#include "resolve/describe.h"

#include <nlohmann/json.hpp>

namespace corral {

nlohmann::json DescribeResolution(const ResolvedRequest& resolved) {
  nlohmann::json gated = nlohmann::json::array();
  for (Dimension dimension : resolved.gated) gated.push_back(DimensionName(dimension));
  const Resolution& r = resolved.resolution;
  return {{"mode", ModeName(r.policy.mode)},
          {"mode_layer", ModeLayerName(r.mode_layer)},
          {"workspace_layer", RootLayerName(r.root_layer)},
          {"resolution", r.Describe()},
          {"workspace_note", r.root_note},
          {"session", resolved.session ? nlohmann::json(resolved.session->id()) : nlohmann::json(nullptr)},
          {"approval", ApprovalPolicyName(resolved.approval)},
          {"approval_source", resolved.approval_source},
          {"preset", resolved.preset ? nlohmann::json(resolved.preset->Describe()) : nlohmann::json(nullptr)},
          {"config_files", resolved.config_files},
          {"profile", resolved.profile_fingerprint ? nlohmann::json(*resolved.profile_fingerprint)
                                                   : nlohmann::json(nullptr)},
          {"gated", gated},
          {"backend", resolved.backend}};
}

}  // namespace corral
