#include "run/egress.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>

#include "net/host_allowlist.h"

namespace corral {
namespace {

// One write, so the line is not torn by the command's own stderr; a
// terminal in raw mode (the pty relay) needs its carriage return.
void SayRefusal(const EgressDecision& decision) {
  std::string line = EgressRefusalLine(decision.host, decision.port, decision.rule);
  line += ::isatty(STDERR_FILENO) ? "\r\n" : "\n";
  (void)!::write(STDERR_FILENO, line.data(), line.size());
}

}  // namespace

void EgressLog::Add(const EgressDecision& decision) {
  std::lock_guard<std::mutex> lock(mutex_);
  decisions_.push_back(decision);
}

std::vector<EgressDecision> EgressLog::Take() {
  std::lock_guard<std::mutex> lock(mutex_);
  return std::exchange(decisions_, {});
}

Result<std::unique_ptr<EgressProxy>> StartEgressProxy(const Policy& policy, SandboxProcess& process, EgressLog& log) {
  // Two descriptors a connection: room for the proxy's connections under
  // corral's own soft limit, up to the hard one (the sandbox, spawned
  // already, keeps the limits it was given).
  struct rlimit files;
  if (::getrlimit(RLIMIT_NOFILE, &files) == 0) {
    rlim_t wanted = std::min<rlim_t>(files.rlim_max, 8192);
    if (files.rlim_cur < wanted) {
      files.rlim_cur = wanted;
      (void)::setrlimit(RLIMIT_NOFILE, &files);
    }
  }
  auto gate = std::make_shared<HostAllowlist>(policy.egress().hosts, policy.egress().private_ranges);
  EgressOptions options;
  options.on_decision = [&log](const EgressDecision& decision) {
    if (decision.verdict == EgressVerdict::kDenied) SayRefusal(decision);
    log.Add(decision);
  };
  return EgressProxy::Start(process.TakeProxyListeners(), std::move(gate), std::move(options));
}

AuditEvent EgressEvent(const EgressDecision& decision) {
  AuditEvent event("egress");
  event.Set("protocol", EgressProtocolName(decision.protocol))
      .Set("host", decision.host)
      .Set("port", static_cast<int>(decision.port))
      .Set("verdict", decision.verdict == EgressVerdict::kAllowed ? "allowed" : "denied")
      .Set("rule", decision.rule);
  if (!decision.address.empty()) event.Set("address", decision.address);
  event.Set("sent", static_cast<int64_t>(decision.bytes_sent))
      .Set("received", static_cast<int64_t>(decision.bytes_received));
  return event;
}

}  // namespace corral
