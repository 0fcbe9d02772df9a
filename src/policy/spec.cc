#include "policy/spec.h"

namespace corral {

Result<Policy> BuildPolicy(const HostContext& host, const PolicySpec& spec) {
  if (spec.workspace && spec.no_workspace) {
    return Error(ErrorKind::kUsage, "--workspace and --no-workspace cannot be combined");
  }
  PolicyBuilder builder(host);
  builder.SetMode(spec.mode);
  if (spec.acknowledge_danger) builder.AcknowledgeDangerFullAccess();
  if (spec.workspace) builder.Workspace(*spec.workspace);
  if (spec.no_workspace) builder.NoWorkspace();
  for (const std::string& path : spec.allow_read) builder.AllowRead(path);
  for (const std::string& path : spec.allow_write) builder.AllowWrite(path);
  for (const std::string& path : spec.allow_exec) builder.AllowExec(path);
  for (const std::string& pattern : spec.forbid_read) builder.ForbidRead(pattern);
  for (const std::string& name : spec.allow_env) builder.AllowEnv(name);
  builder.Network(spec.network);
  if (spec.timeout) builder.Timeout(*spec.timeout);
  if (spec.pin_sha256) builder.PinSha256(*spec.pin_sha256);
  builder.BestEffort(spec.best_effort);
  builder.Home(spec.home);
  return builder.Build();
}

}  // namespace corral
