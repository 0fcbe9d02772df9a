// The egress proxy's side of one run (net/egress_proxy.h): started on the
// listeners the sandbox passed out, with the policy's host rules, and what it
// decided, for the audit trail.
//
// A refusal is also one line on corral's stderr at once ("corral: blocked
// connection to HOST:PORT: RULE"), so the agent that ran the command sees it
// without reading the trail. Each decision becomes one `egress` record when
// the run ends: protocol, host, port, verdict, rule, the address connected to
// and the bytes each way; never a payload, a header or a URL.
//
//   EgressLog log;
//   CORRAL_ASSIGN_OR_RETURN(auto proxy, StartEgressProxy(policy, process, log));
//   ... Supervise ...
//   proxy->Stop();
//   for (const EgressDecision& d : log.Take()) audit.Record(EgressEvent(d));
#pragma once

#include <memory>
#include <mutex>
#include <vector>

#include "audit/audit.h"
#include "exec/spawn.h"
#include "net/egress_proxy.h"
#include "policy/policy.h"

namespace corral {

// The decisions, kept from the proxy's thread for the caller's.
class EgressLog {
 public:
  void Add(const EgressDecision& decision);
  std::vector<EgressDecision> Take();

 private:
  std::mutex mutex_;
  std::vector<EgressDecision> decisions_;
};

Result<std::unique_ptr<EgressProxy>> StartEgressProxy(const Policy& policy, SandboxProcess& process, EgressLog& log);

AuditEvent EgressEvent(const EgressDecision& decision);

}  // namespace corral
