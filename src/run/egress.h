// The egress proxy's side of one run (net/egress_proxy.h): started on the
// listeners the sandbox passed out, with the policy's host rules, and what it
// decided, reported as it happens.
//
// Each decision is one `egress` record in the trail at once, from the
// proxy's thread (the trail writes each record with one write(2)): protocol,
// host, port, verdict, rule, the address connected to and the bytes each
// way; never a payload, a header or a URL. A killed corral therefore loses
// none that were made. A refusal is also one line on corral's stderr
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

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>

#include "audit/audit.h"
#include "net/egress_proxy.h"
#include "policy/policy.h"

namespace corral {

class EgressReporter {
 public:
  static constexpr size_t kMaxRefusalLines = 50;
  static constexpr size_t kMaxRepeatedKinds = 1024;  // distinct refusals counted; the rest in one bucket

  explicit EgressReporter(const AuditTrail& audit) : audit_(audit) {}

  // From the proxy's thread.
  void Decided(const EgressDecision& decision);
  // After the proxy has stopped: the counts of repeated refusals, and the
  // stderr lines left out.
  void Finish();

 private:
  const AuditTrail& audit_;
  std::mutex mutex_;
  std::map<std::tuple<int, std::string, uint16_t, std::string>, uint64_t> repeated_;
  uint64_t repeated_elsewhere_ = 0;
  size_t lines_ = 0;
  uint64_t lines_left_out_ = 0;
};

// Called from Spawn (Command::serve_egress), before the command's exec.
Result<std::unique_ptr<EgressProxy>> StartEgressProxy(const Policy& policy, EgressListeners listeners,
                                                      EgressReporter& reporter);

AuditEvent EgressEvent(const EgressDecision& decision);

}  // namespace corral
