// Network approval on demand, the gate's side: the questions a running
// command's connections raise, put to the same Approver every other
// question of the run goes to (the terminal, the --approval-fd channel, MCP
// elicitation).
//
// Under --allow-host, when the approval policy asks (ask-dangerous,
// ask-dangerous-tool-edit: the safe, review and custom presets), a
// connection to a place no --allow-host rule names is held by the proxy and
// asked about here (net/asking_gate.h holds, serialises and remembers;
// run/egress.cc joins the two). gate::Admit makes a NetworkApprover for a
// run whose caller keeps its approver for the run (AdmitRequest::
// network_questions); otherwise nobody is asked and such a connection is
// refused as "not in --allow-host", as before.
//
// Each question is one ApprovalRequest of kind kNetwork: the command, the
// host and port, the class "network:HOST:PORT", allow-for-run offered, and
// allow-for-session offered when the run is in a session (and the class is
// short enough to be one, IsSessionApprovalClass). An allow-for-session
// answer is appended to the session log as an approval/allow event, bound to
// the run's mode and workspace like a command's; a later run of the session
// in that workspace and that mode or a narrower one starts with the place
// allowed (AllowedForSession). An append that fails turns the answer into a
// refusal. Every failure to ask (no terminal, a broken channel, the
// deadline) is a refusal, with the approver's reason.
//
// What is never asked about: an allowed place, a --deny-host match, and
// every address corral itself refuses (loopback, private, link-local,
// metadata, the host's own): the asking gate passes those through, and an
// allowed answer still has its addresses checked.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gate/approval.h"
#include "policy/mode.h"
#include "state/session_log.h"

namespace corral::gate {

// How long a held connection waits for its answer, unless told otherwise.
inline constexpr std::chrono::seconds kDefaultNetworkApprovalTimeout{60};
inline constexpr std::chrono::seconds kMaxNetworkApprovalTimeout{3600};

struct NetworkAnswer {
  ApprovalAnswer answer = ApprovalAnswer::kDeny;
  std::string by;   // Approver::Who()
  std::string why;  // a refusal's reason: "denied by the terminal", the approver's error
};

class NetworkApprover {
 public:
  // `approver` is not owned: it must outlive every Ask (the run).
  NetworkApprover(Approver& approver, ApprovalContext context, std::optional<Session> session, Mode mode,
                  std::vector<std::string> argv, std::chrono::milliseconds timeout);

  // Blocking: asks whether the command may connect to host:port, giving up
  // at `deadline`. Called from one thread at a time.
  NetworkAnswer Ask(const std::string& host, uint16_t port, std::chrono::steady_clock::time_point deadline);

  // The places earlier runs of the session allowed for the session, for a
  // run in this mode and workspace.
  std::vector<std::pair<std::string, uint16_t>> AllowedForSession() const;

  std::chrono::milliseconds timeout() const { return timeout_; }

 private:
  Approver& approver_;
  ApprovalContext context_;
  std::optional<Session> session_;
  Mode mode_;
  std::vector<std::string> argv_;
  std::chrono::milliseconds timeout_;
};

// "network:HOST:PORT", the class an answer covers.
std::string NetworkClassKey(const std::string& host, uint16_t port);

}  // namespace corral::gate
