// Network approval on demand: the egress gate (net/egress_gate.h) that
// puts a place the lists do not name to someone, instead of refusing it.
//
// AskingGate wraps another gate (the allowlist, net/host_allowlist.h).
// What that gate decides by a rule stays decided: an allowed host is
// allowed, a --deny-host match is refused, and CheckAddress is the inner
// gate's alone, so corral's own refusals (loopback, private, link-local,
// metadata addresses, the host's own addresses) win over any answer and are
// never asked about. Only a refusal whose basis is kNotListed ("not in
// --allow-host") becomes kAsk: the proxy holds the connection and calls Ask.
// An address literal the inner gate's CheckAddress refuses is refused with
// that reason and never asked about (a name is not resolved before the
// answer: its addresses are checked after an allowed one).
//
// The questions go to an EgressAsker, a blocking call made on the gate's
// one asking thread, so questions are asked one at a time (never two on a
// terminal at once), and a connection held for an answer never stalls the
// proxy's thread or the other connections. Identical questions (the same
// host and port) waiting at once are asked once, and the one answer goes to
// every connection waiting for it. An answer is
//   kAllowConnection  this connection (and those waiting on the same question)
//   kAllowRun         this host and port for the rest of the run (this gate)
//   kAllowSession     as kAllowRun; the asker has recorded it in the session
//                     log, so the next run of the session starts with it
//                     (`allowed_for_session`)
//   kDeny             refused, as is every failure to ask
// Each allowed ruling says who answered and for what scope (EgressRuling::
// answered_by, scope), for the trail.
//
// Fails closed: a question not answered within `timeout` of being asked for
// (waiting behind another question counts) is refused, and an answer that
// comes after it allows nothing, not even for later; the asker is given that
// deadline. The destructor refuses every waiting connection and joins the
// asking thread once the question open on it returns (the asker must return
// by its deadline).
//
//   auto gate = std::make_shared<AskingGate>(allowlist, asker, std::chrono::seconds(60));
//   EgressProxy::Start(std::move(listeners), gate, options);
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "net/egress_gate.h"

namespace corral {

enum class EgressAnswer { kDeny, kAllowConnection, kAllowRun, kAllowSession };

struct EgressAnswerGiven {
  EgressAnswer answer = EgressAnswer::kDeny;
  std::string by;   // who answered ("the approval channel"), or who could not
  std::string why;  // for a refusal: "denied", or why nobody could answer
};

using EgressAsker = std::function<EgressAnswerGiven(const std::string& host, uint16_t port,
                                                    std::chrono::steady_clock::time_point deadline)>;

using HostAndPort = std::pair<std::string, uint16_t>;

class AskingGate : public EgressGate {
 public:
  // `allowed_for_session`: the places earlier runs of the session allowed
  // for the session (from its log); allowed here without asking.
  AskingGate(std::shared_ptr<const EgressGate> inner, EgressAsker asker, std::chrono::milliseconds timeout,
             std::vector<HostAndPort> allowed_for_session = {});
  ~AskingGate() override;
  AskingGate(const AskingGate&) = delete;
  AskingGate& operator=(const AskingGate&) = delete;

  EgressRuling Decide(const std::string& host, uint16_t port) const override;
  Result<void> CheckAddress(const Address& address) const override;
  void Ask(const std::string& host, uint16_t port, std::function<void(EgressRuling)> answered) const override;

  // Questions put to the asker so far (identical waiting ones count once).
  size_t questions_asked() const;

 private:
  struct Remembered {
    std::string by;
    EgressScope scope = EgressScope::kRun;
  };
  struct Pending {
    std::chrono::steady_clock::time_point since;
    std::vector<std::function<void(EgressRuling)>> waiting;
  };
  void AskInTurn() const;  // the asking thread

  std::shared_ptr<const EgressGate> inner_;
  EgressAsker asker_;
  std::chrono::milliseconds timeout_;
  mutable std::mutex mutex_;
  mutable std::condition_variable queued_;
  mutable std::map<HostAndPort, Remembered> remembered_;
  mutable std::map<HostAndPort, Pending> pending_;
  mutable std::deque<HostAndPort> queue_;
  mutable bool stopping_ = false;
  mutable size_t asked_ = 0;
  mutable std::thread thread_;
};

}  // namespace corral
