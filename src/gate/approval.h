// The approval gate: whether an agent's action may go ahead at all.
//
// Approval and the sandbox are independent gates. Approval decides whether a
// call runs; the sandbox mode decides what it can touch once it does. Actions
// are tool calls (read, ls, grep, find: read-only; write, edit: edits; bash:
// a command) or shell commands given as argv. Decide applies a policy:
//   allow-all                every action runs;
//   deny-all                 nothing runs, read-only tools included;
//   ask-dangerous            dangerous commands (dangerous_command.h) and
//                            unknown tools are asked about, the rest runs;
//   ask-dangerous-tool-edit  as ask-dangerous, and edits (write, edit) are
//                            asked about too.
// An ApprovalGate turns "ask" into a question for an Approver (the CLI's is
// TtyApprover, or ChannelApprover for a harness). Answers are allow-once (y,
// this call), deny (n), allow-for-run (a: every call of this class for the
// rest of the run) and allow-for-session (a harness's channel only, and only
// in a session: the gate's caller records the class in the session log, and
// later gates of that session start with it allowed).
//
//   TtyApprover tty;
//   ApprovalGate gate(ApprovalPolicy::kAskDangerous, &tty);
//   ApprovalRecord record = gate.Check(Action::Command({"git", "push"}));
//   audit.Record(record.ToAuditEvent());
//   if (!record.allowed) return ...;
//
// Security: the gate fails closed. With no approver, or an approver that
// fails (no terminal, a hang-up, a malformed answer), an "ask" is a denial,
// never an allow. An "a" answer lives in the gate object only: it is never
// written anywhere, and a new gate (a new run) asks again. Only an
// allow-for-session answer, which the gate offers only when it was given a
// session, outlives the gate, and only through the session log; an
// approver that gives it where it was not offered is refused. Policy "deny" is final: no approver
// answer can turn it into an allow. allow-all removes the question entirely;
// the sandbox is then the only control.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "audit/audit.h"
#include "base/result.h"
#include "policy/approval_policy.h"

namespace corral {

enum class ToolClass { kReadOnly, kEdit, kCommand, kUnknown };
std::string_view ToolClassName(ToolClass tool_class);  // "read-only", "edit", "command", "unknown"
// read ls grep find -> read-only; write edit -> edit; bash -> command.
ToolClass ClassifyTool(std::string_view tool);

// One thing an agent wants to do.
struct Action {
  enum class Kind { kTool, kCommand };
  Kind kind = Kind::kCommand;
  std::string tool;               // kTool: the tool's name
  std::vector<std::string> argv;  // kCommand, and the bash tool: the command it runs

  static Action Tool(std::string name, std::vector<std::string> argv = {});
  static Action Command(std::vector<std::string> argv);

  // For people and the audit trail: "write", "bash: rm -rf build",
  // "command: git push". Cut at 512 bytes.
  std::string Summary() const;
};

enum class Decision { kAllow, kDeny, kAsk };
std::string_view DecisionName(Decision decision);  // "allow", "deny", "ask"

struct Verdict {
  Decision decision = Decision::kDeny;
  std::string rationale;
  // What an "a" answer covers: "tool:write", "command:git-push", ...
  std::string class_key;
};

Verdict Decide(ApprovalPolicy policy, const Action& action);

enum class ApprovalAnswer {
  kAllowOnce,        // y: this call only
  kDeny,             // n
  kAllowForRun,      // a: every call of this class, for this gate's life
  kAllowForSession,  // every call of this class, for the rest of the session
};
// "allow-once", "deny", "allow-for-run", "allow-for-session"
std::string_view ApprovalAnswerName(ApprovalAnswer answer);

// What is asked: whether a command may run (approval), a wider mode for one
// call (escalation, escalation.h), a profile's Gated dimension for one
// command (grant, admit.h), or whether a running command may connect to a
// host the allowlist does not name (network, network_approval.h).
enum class QuestionKind { kApproval, kEscalation, kGrant, kNetwork };
std::string_view QuestionKindName(QuestionKind kind);  // "approval", "escalation", "grant", "network"

// Whether allow-for-session may be answered.
enum class SessionAnswer { kNotOffered, kOffered };
// Whether allow-for-run may be answered on the approval channel (a network
// question only; the terminal's "a" is always offered).
enum class RunAnswer { kNotOffered, kOffered };

// The run a question is about, for an approver that is a program.
struct ApprovalContext {
  std::string policy;     // the approval policy's name
  std::string mode;       // the sandbox mode the run would have
  std::string cwd;        // the run's working directory
  std::string workspace;  // the workspace root; empty with --no-workspace
  std::string session;    // the session id; empty with no session
};

struct ApprovalRequest {
  std::string summary;    // Action::Summary()
  std::string rationale;  // why the policy asks
  std::string class_key;  // what "a" would cover
  QuestionKind kind = QuestionKind::kApproval;
  std::vector<std::string> argv{};  // the command asked about
  ApprovalContext context{};
  SessionAnswer session_answer = SessionAnswer::kNotOffered;
  RunAnswer run_answer = RunAnswer::kNotOffered;
  // A network question: the host (as the command named it) and the port.
  std::string host{};
  uint16_t port = 0;
  // When set, no answer by then is an Error (the approver gives up then,
  // or sooner by its own timeout).
  std::optional<std::chrono::steady_clock::time_point> deadline{};
};

// Asks someone. An Error means nobody could answer: the gate denies.
class Approver {
 public:
  virtual ~Approver() = default;
  virtual Result<ApprovalAnswer> Request(const ApprovalRequest& request) = 0;
  // Who answers, for the trail: "the terminal", "the approval channel".
  virtual std::string Who() const { return "the approver"; }
};

// How the gate reached its outcome.
enum class ApprovalBasis {
  kPolicy,           // the policy allowed or denied without asking
  kAnsweredOnce,     // the approver said y
  kAnsweredForRun,   // the approver said a
  kRemembered,       // an earlier a for this class, in this gate
  kAnsweredForSession,    // the approver said allow-for-session
  kRememberedForSession,  // an earlier allow-for-session, from the session log
  kAnsweredDeny,     // the approver said n
  kNoApprover,       // the policy asked but there is no approver
  kApproverFailed,   // the approver returned an error
};
std::string_view ApprovalBasisName(ApprovalBasis basis);

// One gate decision, for the audit trail.
struct ApprovalRecord {
  std::string action;  // Action::Summary()
  std::string class_key;
  ApprovalPolicy policy = ApprovalPolicy::kDenyAll;
  Decision policy_decision = Decision::kDeny;
  bool allowed = false;
  ApprovalBasis basis = ApprovalBasis::kPolicy;
  std::string rationale;
  // kApproverFailed: what the approver reported.
  std::optional<Error> approver_error;

  // An "approval" record: action, class, policy, decision, outcome
  // (allowed/denied), basis and rationale.
  AuditEvent ToAuditEvent() const;
};

class ApprovalGate {
 public:
  // `approver` may be null (every "ask" is then denied); it is not owned and
  // must outlive the gate. `context` is passed on with each question; with a
  // session in it (context.session), allow-for-session is offered, and the
  // classes in `allowed_for_session` (the session's earlier answers) are
  // allowed without asking.
  ApprovalGate(ApprovalPolicy policy, Approver* approver, ApprovalContext context = {},
               std::vector<std::string> allowed_for_session = {});
  ApprovalGate(const ApprovalGate&) = delete;
  ApprovalGate& operator=(const ApprovalGate&) = delete;

  ApprovalPolicy policy() const { return policy_; }

  // Decides one action, asking the approver if the policy says so. Calls are
  // serialised, so two questions never share the terminal.
  ApprovalRecord Check(const Action& action);

 private:
  const ApprovalPolicy policy_;
  Approver* const approver_;
  const ApprovalContext context_;
  const std::set<std::string> allowed_for_session_;
  std::mutex mutex_;
  std::set<std::string> allowed_for_run_;
};

}  // namespace corral
