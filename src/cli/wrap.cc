// `corral wrap [--json] [--backend B] [policy flags] -- CMD [ARGS...]`:
// prints how to confine CMD, so a harness in any language can spawn it.
// With --json, the ConfinedArgv (provider.h) plus a "detection" object
// saying which backend won and why; without, the argv one shell-quoted word
// per line (and any enforcement gaps on stderr). A backend that cannot give
// every guarantee the policy requires refuses (code "partial_enforcement")
// unless --best-effort accepts the gaps. A refusal exits with corral's usual
// code (77 for danger-full-access, 125 for no backend or a partial one) and,
// with --json, prints {"error": {...}} (cli/refusal.h). Nothing is run,
// except the backend probes of detection. The gate asks at wrap time, on
// the terminal or the --approval-fd channel (closed before detection); the
// printed argv never asks again, so it carries no channel. The native
// backend's compiled policy goes to <state>/policies (policy/policy_file.h
// says what is cleaned up there) unless --policy-dir names another
// directory; --audit (else the user config's audit.trail) is passed on in
// its argv.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <climits>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "audit/audit.h"
#include "base/json_bytes.h"
#include "base/mutant.h"
#include "cli/commands.h"
#include "cli/refusal.h"
#include "confine/detect.h"
#include "exec/backend_probes.h"
#include "gate/admit.h"
#include "policy/unix_sockets.h"
#include "state/state_dir.h"

namespace corral::cli {
namespace {

std::string SelfPath() {
  char buffer[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", buffer, sizeof buffer - 1);
  return n > 0 ? std::string(buffer, static_cast<size_t>(n)) : std::string();
}

// A POSIX shell word that reads back as `word`.
std::string ShellQuote(const std::string& word) {
  bool plain = !word.empty() && word.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                                      "0123456789_@%+=:,./-") == std::string::npos;
  if (plain) return word;
  std::string out = "'";
  for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// The refusal on stderr (with its code, for scripts), and with --json also as
// {"error": {"kind", "code", "message"}} on stdout.
int Fail(const Error& error, bool json) {
  return ReportRefusal(error, json ? RefusalFormat::kJson : RefusalFormat::kText, "wrap: ");
}

}  // namespace

void WrapCommand::Register(CLI::App& app) {
  flags.Register(app);
  app.add_flag("--json", json, "print the confined argv and its enforcement report as JSON");
  app.add_option("--backend", backend, "auto (default), native, bubblewrap, seatbelt or unavailable")
      ->type_name("BACKEND")
      ->check(CLI::IsMember({"auto", "native", "bubblewrap", "seatbelt", "unavailable"}));
  app.add_option("--policy-dir", policy_dir,
                 "where the native backend writes the compiled policy (default: policies/ in corral's state "
                 "directory)")
      ->type_name("DIR");
  app.add_option("--audit", audit,
                 "the wrapped run's audit trail: FILE (absolute) or - for stderr, passed to the native runner "
                 "(default: audit.trail from the user config, else the state directory's trail)")
      ->type_name("FILE");
  approval.Register(app);
}

int WrapCommand::Execute(std::vector<std::string> command) const {
  // Who answers the gate (at wrap time: the argv printed never asks again).
  Result<std::unique_ptr<Approver>> approver = approval.MakeApprover();
  if (!approver.ok()) return Fail(approver.error(), json);
  Result<HostContext> host = CaptureHostContext();
  if (!host.ok()) return Fail(host.error(), json);
  Result<ResolvedRequest> resolved = flags.Resolve(*host);
  if (!resolved.ok()) return Fail(resolved.error(), json);
  std::string configured_backend = resolved->backend;
  std::optional<std::string> configured_audit = resolved->audit_trail;
  // The same gate as `corral run`: a wrapped argv is a run too, one that
  // another process spawns later, so it cannot carry a Gated dimension's grant.
  gate::AdmitRequest request;
  request.argv = std::move(command);
  request.policy = std::move(resolved).value();
  request.host = *host;
  request.destination = gate::Destination::kWrapped;
  Result<gate::AdmittedRun> admitted = gate::Admit(std::move(request), **approver);
  if (!MutantActive(Mutant::kApprovalClose)) approver->reset();  // the channel closes before detection runs anything
  if (!admitted.ok()) return Fail(admitted.error(), json);
  const Policy& policy = admitted->policy();
  // Loud at wrap time too (the native runner says it again, and audits it, at each run).
  for (const std::string& path : policy.CredentialGrants()) {
    PrintError("--allow-credential " + path + ": the wrapped command can read this credential store");
  }
  for (const std::string& path : policy.UnixSockets()) {
    if (std::optional<std::string_view> what = HostControlSocket(path)) {
      PrintError("--allow-unix " + path + ": this socket hands the wrapped command control of the host: " +
                 std::string(*what));
    }
  }

  DetectOptions options;
  // --backend, else sandbox.backend from the user config, else detection.
  options.forced = backend;
  if (!options.forced && configured_backend != "auto") options.forced = configured_backend;
  options.corral_path = SelfPath();
  if (policy_dir) {
    options.policy_dir = *policy_dir;
  } else {
    // corral's state directory: private, and out of every sandbox's reach.
    Result<StateDir> state = StateDir::Open(host->home, StateDir::Create::kYes);
    if (!state.ok()) return Fail(state.error(), json);
    Result<UniqueFd> policies = state->Subdir("policies", StateDir::Create::kYes);
    if (!policies.ok()) return Fail(policies.error(), json);
    options.policy_dir = state->path() + "/policies";
  }
  // --audit, else the user config's audit.trail: the runner records there.
  options.audit = audit ? audit : configured_audit;
  if (options.audit) {
    if (Status name = CheckAuditTrailName(*options.audit); !name.ok()) return Fail(name.error(), json);
  }
  Result<Detection> detection = DetectProvider(options);
  if (!detection.ok()) return Fail(detection.error(), json);
  // Only the native backend's argv runs corral, which writes the trail.
  if (audit && detection->backend != "native") {
    return Fail(Error(ErrorKind::kUsage, "--audit: the " + detection->backend +
                                             " backend's argv does not run corral, so nothing would write the "
                                             "trail; use the native backend, or drop --audit"),
                json);
  }
  Result<ConfinedArgv> confined = detection->provider->Confine(admitted->argv(), policy);
  if (!confined.ok()) return Fail(WithDetectionContext(confined.error(), *detection), json);

  if (json) {
    nlohmann::json out = ConfinedArgvToJson(*confined);
    out["detection"] = {{"reason", detection->reason}, {"tried", detection->tried}};
    // What the command may reach, so a harness need not parse the policy:
    // network_boundary is provided under --allow-port too, with every host's
    // port open.
    const EgressRules& egress = policy.egress();
    out["network"] = {{"mode", policy.network_name()},     {"allow_host", egress.allow_text},
                      {"deny_host", egress.deny_text},      {"allow_local", egress.local_ports},
                      {"allow_port", egress.connect_ports}, {"allow_dns", egress.dns_names},
                      {"allow_unix", policy.UnixSockets()}};
    // A harness runs this argv: a byte replaced would run another command.
    if (EncodeBytes(out) != out) {
      return Fail(Error(ErrorKind::kUsage, "wrap --json: the wrapped command line holds bytes that are not UTF-8, "
                                           "which JSON cannot carry exactly; use corral wrap without --json (one "
                                           "shell-quoted word a line)"),
                  json);
    }
    std::printf("%s\n", out.dump(2).c_str());
    return 0;
  }
  for (const std::string& word : confined->argv) std::printf("%s\n", ShellQuote(word).c_str());
  for (const std::string& gap : confined->gaps) {
    PrintError("wrap: partial enforcement (" + confined->backend + "): " + gap);
  }
  return 0;
}

}  // namespace corral::cli
