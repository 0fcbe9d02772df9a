// Escalation: one call asks to run under a wider sandbox mode.
//
// A call denied under its mode gets the denial marker and a hint:
//   [sandbox: file access denied under read-only mode]
//   You may retry ... with sandbox_permissions ... and a justification ...
// The retried call carries sandbox_permissions (the target mode) and a
// justification. ApproveEscalation then checks, in this order:
//   1. both arguments or neither (an empty or blank justification is
//      missing)                               -> kUsage  "escalation_invalid_args"
//   2. the target is workspace-write or danger-full-access and strictly
//      wider than the current mode; otherwise it is refused before anyone
//      is asked                               -> kDenied "escalation_not_wider"
//   3. the target is within the ceiling, when there is one (a profile's
//      mode); otherwise refused before anyone is asked
//                                             -> kDenied "escalation_beyond_ceiling"
//   4. there is an approver                   -> kDenied "escalation_unavailable"
//   5. the approver's answer: approve         -> allowed-once (the target mode)
//                             reject          -> kDenied "escalation_rejected"
//                             cancel          -> kDenied "escalation_cancelled"
//                             an error        -> kDenied "escalation_unavailable"
// Neither argument means no escalation: the call runs under its own mode.
//
//   EscalationRequest request{Mode::kReadOnly, "workspace-write", "needs to write the build output"};
//   CORRAL_ASSIGN_OR_RETURN(EscalationGrant grant, ApproveEscalation(request, &channel));
//   PolicyRequest policy_request{grant.mode, &session};  // this one call only
//
// Security: an approval is good for ONE call. ApproveEscalation never
// changes the session's mode: the caller passes grant.mode as that call's
// override and records nothing (a lasting change is the user's sandbox/mode
// event with source "escalation", written by the caller on purpose). With no
// approver the request is refused: wider access is never granted silently.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "gate/approval.h"
#include "policy/mode.h"

namespace corral {

struct EscalationRequest {
  Mode current = Mode::kReadOnly;                  // the mode the call was denied under
  std::optional<std::string> sandbox_permissions;  // the target mode's name
  std::optional<std::string> justification;        // why, in the model's words
  std::string action;                              // what the call does, for the question
  std::optional<Mode> ceiling;                     // the widest mode allowed at all (a profile's)
};

enum class EscalationAnswer { kApprove, kReject, kCancel };

struct EscalationQuestion {
  Mode current;
  Mode target;
  std::string justification;
  std::string action;
};

// Who decides an escalation. An Error means nobody could answer.
class EscalationApprover {
 public:
  virtual ~EscalationApprover() = default;
  virtual Result<EscalationAnswer> Request(const EscalationQuestion& question) = 0;
};

// Asks through an ordinary Approver (the same channel as ask-dangerous):
// y approves, n rejects, and a also approves this one call only, since an
// escalation is never remembered.
class ApproverEscalationChannel : public EscalationApprover {
 public:
  // `context` and `argv` go with the question (for an approver that is a
  // program, ChannelApprover).
  explicit ApproverEscalationChannel(Approver& approver, ApprovalContext context = {},
                                     std::vector<std::string> argv = {})
      : approver_(approver), context_(std::move(context)), argv_(std::move(argv)) {}
  Result<EscalationAnswer> Request(const EscalationQuestion& question) override;

 private:
  Approver& approver_;
  ApprovalContext context_;
  std::vector<std::string> argv_;
};

enum class EscalationOutcome { kNotRequested, kAllowedOnce, kRejected, kCancelled, kUnavailable };
// "not-requested", "allowed-once", "rejected", "cancelled", "unavailable".
std::string_view EscalationOutcomeName(EscalationOutcome outcome);

// What the call may run under: its own mode (kNotRequested) or the approved
// target (kAllowedOnce).
struct EscalationGrant {
  EscalationOutcome outcome = EscalationOutcome::kNotRequested;
  Mode mode = Mode::kReadOnly;
};

// `approver` may be null. Refusals are the typed Errors listed above.
Result<EscalationGrant> ApproveEscalation(const EscalationRequest& request, EscalationApprover* approver);

// The outcome a refusal stands for (rejected, cancelled, unavailable), or
// nullopt for a malformed or not-wider request and for other errors.
std::optional<EscalationOutcome> EscalationOutcomeOf(const Error& error);

// The escalation targets strictly wider than `mode`, narrowest first.
std::vector<Mode> WiderModes(Mode mode);

// Exactly "[sandbox: file access denied under <mode> mode]".
std::string DenialMarker(Mode mode);
// A sentence for the model: how to retry with sandbox_permissions and a
// justification, naming the wider modes (or saying there are none).
std::string EscalationHint(Mode mode);

}  // namespace corral
