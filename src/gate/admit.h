// gate::Admit: the one gate between a resolved request and a run.
//
// Every front end (`corral run`, `corral wrap`, the executor library, the MCP
// server) hands Admit what it resolved and an Approver (the terminal's
// TtyApprover, a harness's ChannelApprover, a test's fake). Only Admit makes an AdmittedRun, and
// RunConfined (run/run.h) runs nothing else, so no caller spawns a command
// the gate did not admit. For a resolved request, in this order:
//
//   1. a wrapped argv (Destination::kWrapped: another process runs it later)
//      with a Gated dimension is refused before anyone is asked: a grant is
//      for one spawn here                    -> kDenied "gated_not_wrappable"
//   2. approval (approval.h): allow, deny, or ask the approver; recorded as
//      `approval` unless the policy is allow-all; an allow-for-session
//      answer is appended to the session's log
//                                            -> kDenied "approval_denied"
//   3. escalation, when sandbox_permissions or justification is given
//      (escalation.h, asked through the same approver): recorded as
//      `escalation`; approved, it sets this call's mode, and the person who
//      approved danger-full-access at the prompt is its acknowledgement
//   4. the Policy is built for `host` (policy.h), with the trail's file
//      among corral's own files
//   5. the trail is out of the command's reach: a trail file inside a
//      writable grant is refused (unless the run is unconfined)
//                                            -> kUsage  "audit_file_refused"
//   6. each Gated dimension is asked about, for this command; recorded as
//      `grant` (issued or refused)           -> kDenied "grant_refused"
//   7. an unconfined (danger-full-access) run records `acknowledged`: who
//      chose it and through which layer (and the session's source)
//   8. with NetworkQuestions::kAskedDuringRun, under --allow-host and an
//      approval policy that asks, the run gets a NetworkApprover
//      (network_approval.h): its connections to places no rule names are
//      asked about while it runs
// A PolicyFile (`corral run --policy-file`) passed steps 1, 2 and 4 when
// `corral wrap` wrote it for its one command (so it has no Gated dimension
// and no escalation); only step 5 applies, and it is not asked about again.
// Any other argv is refused (kPolicy "policy_file_other_command").
//
// Every refusal is an Error, recorded on the trail as one `failed` record
// (FailedEvent, audit.h), except a refused trail (5), which is never
// written to. Nothing runs and nothing is written but the trail.
//
//   TtyApprover tty;
//   gate::AdmitRequest request{.argv = argv, .policy = std::move(resolved), .host = host, .trail = &trail};
//   CORRAL_ASSIGN_OR_RETURN(gate::AdmittedRun run, gate::Admit(std::move(request), tty));
//   RunResult result = RunConfined(std::move(run));   // records to `trail`
//
// Security: an AdmittedRun is the grant. It holds the Policy (its
// fingerprint, its working directory) and the exact argv that were admitted,
// and nothing can change them, so a grant is bound to the command, the cwd
// and the policy by construction. It cannot be made outside Admit (a private
// constructor), copied, or kept for later: RunConfined takes it by value, so
// one admission runs one command once. Only one answer outlives the call:
// allow-for-session, offered only for an approval question in a session
// (ResolvedRequest::session), is appended to that session's log as an
// approval/allow event before the admission, and a later Admit with that
// session allows the class without asking (a failed append refuses the
// run). An "a" (allow for the run) covers this admission only, and the next
// asks again. With no approver that can answer (no terminal, a broken
// channel), every question is a "no".
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "audit/audit.h"
#include "base/result.h"
#include "gate/approval.h"
#include "gate/network_approval.h"
#include "resolve/request.h"
#include "policy/policy.h"
#include "policy/roots.h"

namespace corral::gate {

// A policy file `corral wrap` wrote, loaded back to run: it passed
// the gate when it was written, for one command. It is made only from a
// compiled policy's text, through the same checks `corral run --policy-file`
// applies (LoadPolicyFile, policy/policy_file.h: compiled for exactly this
// argv, this user and this home, no danger-full-access, every pinned path
// still the one it names), so a library caller cannot pass an arbitrary
// Policy around the gate as "already admitted", and a file admits only the
// command it was compiled for.
class PolicyFile {
 public:
  static Result<PolicyFile> Load(const std::string& text, const std::vector<std::string>& argv,
                                 const HostContext& here);
  const Policy& policy() const { return policy_; }
  const std::vector<std::string>& argv() const { return argv_; }

 private:
  PolicyFile(Policy policy, std::vector<std::string> argv) : policy_(std::move(policy)), argv_(std::move(argv)) {}
  Policy policy_;
  std::vector<std::string> argv_;
};

// Whether the run may ask the approver about connections its allowlist does
// not name (network approval on demand, network_approval.h). kAskedDuringRun
// is a promise: the approver outlives RunConfined.
enum class NetworkQuestions { kNotAsked, kAskedDuringRun };

// Where the admitted command runs.
enum class Destination {
  kSpawn,    // here, through RunConfined
  kWrapped,  // an argv another process runs later (`corral wrap`)
};

struct AdmitRequest {
  std::vector<std::string> argv;
  std::variant<ResolvedRequest, PolicyFile> policy;
  HostContext host;  // what a resolved request's Policy is built for
  // An escalation for this one call: the target mode's name, and why.
  std::optional<std::string> sandbox_permissions;
  std::optional<std::string> justification;
  Destination destination = Destination::kSpawn;
  // Where the gate's decisions are recorded, and later the run's; null
  // records nowhere. Not owned: it must outlive the AdmittedRun. RunConfined
  // writes to this trail, the one whose file the gate kept out of reach.
  const AuditTrail* trail = nullptr;
  // With kAskedDuringRun, a spawned run under --allow-host whose approval
  // policy asks (ask-dangerous, ask-dangerous-tool-edit) gets a
  // NetworkApprover on `approver`, and keeps the session for its answers.
  NetworkQuestions network_questions = NetworkQuestions::kNotAsked;
  std::chrono::milliseconds network_approval_timeout = kDefaultNetworkApprovalTimeout;
  // How a resolved request's Policy is derived; null: BuildPolicy. Not
  // owned: it must outlive the call.
  PolicyDeriver* deriver = nullptr;
};

class AdmittedRun;

// See the top of this file. `approver` is asked every question; it must
// outlive the call.
Result<AdmittedRun> Admit(AdmitRequest request, Approver& approver);

class AdmittedRun {
 public:
  AdmittedRun(AdmittedRun&&) = default;
  AdmittedRun& operator=(AdmittedRun&&) = default;
  AdmittedRun(const AdmittedRun&) = delete;
  AdmittedRun& operator=(const AdmittedRun&) = delete;

  const Policy& policy() const { return policy_; }
  const std::vector<std::string>& argv() const { return argv_; }
  // The trail the gate checked and recorded to (AdmitRequest::trail), or one
  // that records nowhere.
  const AuditTrail& trail() const;
  // Who is asked about a connection the allowlist does not name; null:
  // nobody, such a connection is refused.
  const std::shared_ptr<NetworkApprover>& network_approver() const { return network_approver_; }

 private:
  friend Result<AdmittedRun> Admit(AdmitRequest request, Approver& approver);
  AdmittedRun(Policy policy, std::vector<std::string> argv, const AuditTrail* trail,
              std::shared_ptr<NetworkApprover> network_approver = nullptr)
      : policy_(std::move(policy)), argv_(std::move(argv)), trail_(trail), network_approver_(std::move(network_approver)) {}

  Policy policy_;
  std::vector<std::string> argv_;
  const AuditTrail* trail_;
  std::shared_ptr<NetworkApprover> network_approver_;
};

}  // namespace corral::gate
