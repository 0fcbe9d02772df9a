#include <CLI/CLI.hpp>

#include "audit/audit.h"
#include "cli/commands.h"
#include "exec/exit_codes.h"
#include "exec/run.h"
#include "policy/compiled.h"

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <iterator>

namespace corral::cli {

void RunCommand::Register(CLI::App& app) {
  flags.Register(app);
  app.add_option("--audit", audit, "append the audit trail to FILE instead of stderr")->type_name("FILE");
  app.add_option("--policy-file", policy_file,
                 "enforce the compiled policy in FILE (as `corral wrap` writes it) instead of grant flags")
      ->type_name("FILE");
}

Result<Policy> RunCommand::LoadPolicy() const {
  if (policy_file) {
    if (flags.Any()) return Error(ErrorKind::kUsage, "--policy-file cannot be combined with policy flags");
    // The file is the policy: refuse one another user could have written.
    std::string dir = policy_file->find('/') == std::string::npos ? "." : policy_file->substr(0, policy_file->rfind('/'));
    for (const std::string& path : {*policy_file, dir.empty() ? std::string("/") : dir}) {
      struct stat st;
      if (::lstat(path.c_str(), &st) != 0 || S_ISLNK(st.st_mode) || st.st_uid != ::getuid() ||
          (st.st_mode & 022) != 0) {
        return Error(ErrorKind::kPolicy, "--policy-file " + *policy_file + ": " + path +
                                             " must be yours, not a symlink, and writable by no one else");
      }
    }
    std::ifstream in(*policy_file);
    if (!in) return Error(ErrorKind::kUsage, "--policy-file " + *policy_file + ": cannot read it");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return LoadCompiledPolicy(text);
  }
  CORRAL_ASSIGN_OR_RETURN(HostContext host, CaptureHostContext());
  return flags.Build(host);
}

int RunCommand::Execute(std::vector<std::string> command) const {
  AuditTrail trail = AuditTrail::ToStderr();
  if (audit) {
    Result<AuditTrail> file = AuditTrail::ToFile(*audit);
    if (!file.ok()) {
      PrintError(file.error().ToString());
      return ExitCodeFor(file.error().kind());
    }
    trail = std::move(file).value();
  }
  Result<Policy> policy = LoadPolicy();
  if (!policy.ok()) {
    trail.Record(AuditEvent("failed")
                     .Set("source", "corral")
                     .Set("reason", FailureReasonName(FailureReasonFor(policy.error().kind())))
                     .Set("detail", policy.error().ToString()));
    PrintError(policy.error().ToString());
    return ExitCodeFor(policy.error().kind());
  }
  std::string program = command[0];
  RunResult result = RunConfined(*policy, std::move(command), trail);
  if (result.error) {
    const Error& error = *result.error;
    if (error.kind() == ErrorKind::kNotFound) {
      PrintError(program + ": not found inside the sandbox (is it under a system tree, the workspace or an "
                           "--allow-exec grant?)");
    } else if (error.kind() == ErrorKind::kExec) {
      PrintError(program + ": " + error.ToString() + " (is it under an exec grant?)");
    } else {
      PrintError(error.ToString());
    }
  }
  for (const SweepFinding& finding : result.quarantined) {
    std::string line = finding.path + ": the command " + finding.what + " a protected path; ";
    line += finding.moved_to.empty() ? "it was removed" : "moved to " + finding.moved_to;
    if (!finding.error.empty()) line += " (" + finding.error + ")";
    PrintError(line);
  }
  return result.exit_status;
}

}  // namespace corral::cli
