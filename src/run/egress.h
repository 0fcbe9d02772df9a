// The egress proxy's side of one run (net/egress_proxy.h): started on the
// listeners the sandbox passed out, with the policy's host rules, and what it
// decided, reported as it happens.
//
// Each decision is one `egress` record in the trail as it happens:
// protocol, host, port, verdict, rule, the address connected to and the
// bytes each way, and for a place someone was asked about, who answered
// (`answered_by`) and, when allowed, for what (`scope`: connection, run or
// session); never a payload, a header or a URL. The proxy's thread
// never writes a record itself: it queues it for the reporter's writer
// thread, which writes each with one write(2) (the trail's), so a trail that
// stalls (`--audit -` with a reader that stopped reading) never stalls the
// proxy. At most kMaxQueuedRecords wait; one past that is dropped and
// counted, and Finish writes one `egress_dropped` record with the count once
// the writer has caught up. A refusal is also one line on corral's stderr
// ("corral: blocked connection to HOST:PORT: RULE"), so the agent sees it
// without reading the trail.
//
// A command cannot flood either: a refusal repeated with the same protocol,
// host, port and rule is counted, not written again, and Finish writes one
// record per repeated refusal with its count; at most kMaxRefusalLines lines
// reach stderr, written only when stderr can take them at once (a reader
// that stops reading never stalls the proxy), and Finish says how many were
// left out.
//
//   EgressReporter reporter(audit);
//   command.serve_egress = [&](EgressListeners listeners) -> Result<void> {
//     CORRAL_ASSIGN_OR_RETURN(proxy, StartEgressProxy(policy, std::move(listeners), reporter));
//     return {};
//   };
//   ... Spawn, Supervise ...
//   proxy->Stop();
//   reporter.Finish();
#pragma once

#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <tuple>

#include "audit/audit.h"
#include "gate/network_approval.h"
#include "net/egress_proxy.h"
#include "policy/policy.h"

namespace corral {

class EgressReporter {
 public:
  static constexpr size_t kMaxRefusalLines = 50;
  static constexpr size_t kMaxRepeatedKinds = 1024;  // distinct refusals counted; the rest in one bucket
  static constexpr size_t kMaxQueuedRecords = 4096;  // records waiting for the writer; one more is dropped

  // `queue_limit` is kMaxQueuedRecords but in tests.
  explicit EgressReporter(const AuditTrail& audit, size_t queue_limit = kMaxQueuedRecords);
  // Finishes, when Finish was not called.
  ~EgressReporter();
  EgressReporter(const EgressReporter&) = delete;
  EgressReporter& operator=(const EgressReporter&) = delete;

  // From the proxy's thread; never waits for the trail.
  void Decided(const EgressDecision& decision);
  // After the proxy has stopped: waits for the writer to write what is
  // queued, then writes the counts of repeated refusals and of dropped
  // records, and says on stderr how many lines were left out. Idempotent.
  void Finish();

 private:
  void Queue(AuditEvent event);  // under mutex_
  void StartWriter();            // under mutex_
  void Write();                  // the writer thread

  const AuditTrail& audit_;
  const size_t queue_limit_;
  std::mutex mutex_;
  std::condition_variable queued_;
  std::deque<AuditEvent> queue_;
  uint64_t dropped_ = 0;
  bool finishing_ = false;
  bool finished_ = false;
  std::thread writer_;
  std::map<std::tuple<int, std::string, uint16_t, std::string>, uint64_t> repeated_;
  uint64_t repeated_elsewhere_ = 0;
  size_t lines_ = 0;
  uint64_t lines_left_out_ = 0;
};

// Called from Spawn (Command::serve_egress), before the command's exec.
// `synthetic`: the names behind the synthetic addresses the sandbox's name
// server gives (null: no transparent capture). `network`: who is asked about
// a place no --allow-host rule names (net/asking_gate.h wraps the
// allowlist); null: such a place is refused.
Result<std::unique_ptr<EgressProxy>> StartEgressProxy(const Policy& policy, EgressListeners listeners,
                                                      EgressReporter& reporter,
                                                      std::shared_ptr<const SyntheticNames> synthetic = nullptr,
                                                      std::shared_ptr<gate::NetworkApprover> network = nullptr);

// The table of synthetic addresses for the policy's allowed names, under
// --allow-host; null otherwise.
std::shared_ptr<SyntheticNames> SyntheticNamesFor(const Policy& policy);

AuditEvent EgressEvent(const EgressDecision& decision);

}  // namespace corral
