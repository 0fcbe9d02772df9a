// `corral mcp [policy flags] [--audit FILE]`: the agent's tools, confined,
// served over stdio to any MCP client (mcp/server.h says the protocol and
// what each call goes through).
//
// stdout carries the protocol only: corral's own lines go to stderr, and
// the default audit trail to corral's state directory. The policy flags are
// checked once at start-up (a bad flag or config is refused before the
// first message) and resolved again for every call.
#include <unistd.h>

#include <CLI/CLI.hpp>

#include "base/exit_codes.h"
#include "cli/commands.h"
#include "cli/refusal.h"
#include "mcp/server.h"

namespace corral::cli {

void McpCommand::Register(CLI::App& app) {
  flags.Register(app);
  app.add_option("--audit", audit,
                 "append the audit trail to FILE (absolute), or - for stderr (default: audit.trail from the user "
                 "config, else audit.jsonl in corral's state directory)")
      ->type_name("FILE");
}

int McpCommand::Execute() const {
  Result<HostContext> host = CaptureHostContext();
  if (!host.ok()) return ReportRefusal(host.error(), RefusalFormat::kText);
  Result<RunRequest> request = flags.ToRequest();
  if (!request.ok()) return ReportRefusal(request.error(), RefusalFormat::kText);
  std::optional<std::string> chosen = audit;
  if (!chosen) {
    Result<std::optional<std::string>> configured = ConfiguredAuditTrail(*request, *host);
    if (configured.ok()) chosen = *configured;
  }
  Result<AuditTrail> trail = OpenTrail(chosen, host->home);
  if (!trail.ok()) return ReportRefusal(trail.error(), RefusalFormat::kText);
  // Fail closed at start-up: a policy that cannot be resolved or built now
  // would refuse every call.
  Result<ResolvedRequest> resolved = ResolveRequest(*request, *host);
  if (!resolved.ok()) return ReportRefusal(resolved.error(), RefusalFormat::kText);
  Result<Policy> policy = BuildPolicy(*host, resolved->spec);
  if (!policy.ok()) return ReportRefusal(policy.error(), RefusalFormat::kText);
  trail->Record(AuditEvent("mcp").Set("action", "start").Set("policy", policy->fingerprint()));

  mcp::ServerOptions options;
  options.request = std::move(request).value();
  options.host = std::move(host).value();
  options.trail = &*trail;
  options.in_fd = STDIN_FILENO;
  options.out_fd = STDOUT_FILENO;
  int status = mcp::Serve(options);
  trail->Record(AuditEvent("mcp").Set("action", "stop"));
  return status;
}

}  // namespace corral::cli
