#include "run/egress.h"

#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>

#include "base/mutant.h"
#include "net/asking_gate.h"
#include "net/host_allowlist.h"
#include "net/hosts_file.h"
#include "policy/egress_capture.h"

namespace corral {
namespace {

// One write, so the line is not torn by the command's own stderr, and only
// when stderr takes it at once; a terminal in raw mode (the pty relay) needs
// its carriage return. False when the line was left out.
bool SayRefusal(const EgressDecision& decision) {
  struct pollfd writable = {STDERR_FILENO, POLLOUT, 0};
  if (::poll(&writable, 1, 0) != 1 || (writable.revents & POLLOUT) == 0) return false;
  std::string line = EgressRefusalLine(decision.host, decision.port, decision.rule);
  line += ::isatty(STDERR_FILENO) ? "\r\n" : "\n";
  if (::send(STDERR_FILENO, line.data(), line.size(), MSG_DONTWAIT | MSG_NOSIGNAL) >= 0) return true;
  return errno == ENOTSOCK && ::write(STDERR_FILENO, line.data(), line.size()) >= 0;
}

}  // namespace

EgressReporter::EgressReporter(const AuditTrail& audit, size_t queue_limit)
    : audit_(audit), queue_limit_(queue_limit) {}

// The writer starts with the first record (a run without egress has none),
// with every signal blocked: corral takes the signals it forwards with
// sigtimedwait on its main thread, and a thread that let one through would
// get it delivered, and its default action would end corral.
void EgressReporter::StartWriter() {
  if (writer_.joinable()) return;
  sigset_t all, previous;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &previous);
  writer_ = std::thread([this] { Write(); });
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
}

EgressReporter::~EgressReporter() { Finish(); }

void EgressReporter::Queue(AuditEvent event) {
  if (MutantActive(Mutant::kEgressTrailInline)) {  // the mutant: the proxy's thread writes the record itself
    audit_.Record(event);
    return;
  }
  if (queue_.size() >= queue_limit_) {
    ++dropped_;
    return;
  }
  StartWriter();
  queue_.push_back(std::move(event));
  queued_.notify_one();
}

void EgressReporter::Write() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    queued_.wait(lock, [this] { return finishing_ || !queue_.empty(); });
    if (queue_.empty()) return;  // finishing, and all written
    AuditEvent event = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    audit_.Record(event);
    lock.lock();
  }
}

void EgressReporter::Decided(const EgressDecision& decision) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (finishing_) return;  // the proxy has stopped before Finish; nothing more comes
  if (decision.verdict == EgressVerdict::kAllowed) {
    Queue(EgressEvent(decision));
    return;
  }
  auto key = std::make_tuple(static_cast<int>(decision.protocol), decision.host, decision.port, decision.rule);
  auto seen = repeated_.find(key);
  if (seen != repeated_.end()) {
    ++seen->second;
    return;
  }
  if (repeated_.size() >= kMaxRepeatedKinds) {
    ++repeated_elsewhere_;
    return;
  }
  repeated_.emplace(key, 0);
  Queue(EgressEvent(decision));
  if (decision.host.empty()) return;  // a malformed request: the trail has it, stderr does not
  if (lines_ < kMaxRefusalLines && SayRefusal(decision)) {
    ++lines_;
  } else {
    ++lines_left_out_;
  }
}

void EgressReporter::Finish() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (finished_) return;
    finished_ = true;
    finishing_ = true;
    queued_.notify_one();
  }
  if (writer_.joinable()) writer_.join();
  std::lock_guard<std::mutex> lock(mutex_);
  if (dropped_ > 0) {
    audit_.Record(AuditEvent("egress_dropped")
                      .Set("dropped", static_cast<int64_t>(dropped_))
                      .Set("why", "the trail did not take records as fast as the proxy decided; at most " +
                                      std::to_string(queue_limit_) + " wait"));
  }
  uint64_t left_out = lines_left_out_ + repeated_elsewhere_;
  for (const auto& [key, count] : repeated_) {
    if (count == 0) continue;
    left_out += count;
    EgressDecision decision;
    decision.protocol = static_cast<EgressProtocol>(std::get<0>(key));
    decision.host = std::get<1>(key);
    decision.port = std::get<2>(key);
    decision.rule = std::get<3>(key);
    audit_.Record(EgressEvent(decision).Set("repeated", static_cast<int64_t>(count)));
  }
  if (repeated_elsewhere_ > 0) {
    audit_.Record(AuditEvent("egress")
                      .Set("verdict", "denied")
                      .Set("repeated", static_cast<int64_t>(repeated_elsewhere_))
                      .Set("rule", "refusals past the first " + std::to_string(kMaxRepeatedKinds) + " kinds"));
  }
  if (left_out > 0) {
    std::fprintf(stderr, "corral: %llu more blocked connections left off stderr (the audit trail counts them)\n",
                 static_cast<unsigned long long>(left_out));
  }
}

std::shared_ptr<SyntheticNames> SyntheticNamesFor(const Policy& policy) {
  if (!policy.egress().active()) return nullptr;
  const EgressRules& rules = policy.egress();
  return std::make_shared<SyntheticNames>([rules](const std::string& name) { return NameAllowed(rules, name); });
}

Result<std::unique_ptr<EgressProxy>> StartEgressProxy(const Policy& policy, EgressListeners listeners,
                                                      EgressReporter& reporter,
                                                      std::shared_ptr<const SyntheticNames> synthetic,
                                                      std::shared_ptr<gate::NetworkApprover> network) {
  // Two descriptors a connection, and a pipe's two for each direction
  // while its bytes move: room for the proxy's connections under corral's
  // own soft limit, up to the hard one (the sandbox, cloned already, keeps
  // the limits it was given).
  struct rlimit files;
  if (::getrlimit(RLIMIT_NOFILE, &files) == 0) {
    rlim_t wanted = std::min<rlim_t>(files.rlim_max, 8192);
    if (files.rlim_cur < wanted) {
      files.rlim_cur = wanted;
      (void)::setrlimit(RLIMIT_NOFILE, &files);
    }
  }
  std::shared_ptr<const EgressGate> gate =
      std::make_shared<HostAllowlist>(policy.egress().hosts, policy.egress().private_ranges);
  EgressOptions options;
  if (network) {
    // Network approval on demand: what the lists do not name is held and
    // asked about (gate/network_approval.h); the lists and corral's own
    // refusals still decide everything else.
    options.ask_timeout = network->timeout();
    EgressAsker asker = [network](const std::string& host, uint16_t port,
                                  std::chrono::steady_clock::time_point deadline) {
      gate::NetworkAnswer given = network->Ask(host, port, deadline);
      EgressAnswerGiven answer;
      answer.by = given.by;
      answer.why = given.why;
      switch (given.answer) {
        case ApprovalAnswer::kDeny: answer.answer = EgressAnswer::kDeny; break;
        case ApprovalAnswer::kAllowOnce: answer.answer = EgressAnswer::kAllowConnection; break;
        case ApprovalAnswer::kAllowForRun: answer.answer = EgressAnswer::kAllowRun; break;
        case ApprovalAnswer::kAllowForSession: answer.answer = EgressAnswer::kAllowSession; break;
      }
      return answer;
    };
    gate = std::make_shared<AskingGate>(std::move(gate), std::move(asker), network->timeout(),
                                        network->AllowedForSession());
  }
  // The host's own names table, read here: every other name is looked up as
  // an absolute name (no search domain ever appended).
  options.names = ReadHostsFile("/etc/hosts");
  options.on_decision = [&reporter](const EgressDecision& decision) { reporter.Decided(decision); };
  options.synthetic = std::move(synthetic);
  return EgressProxy::Start(std::move(listeners), std::move(gate), std::move(options));
}

AuditEvent EgressEvent(const EgressDecision& decision) {
  AuditEvent event("egress");
  event.Set("protocol", EgressProtocolName(decision.protocol))
      .Set("host", decision.host)
      .Set("port", static_cast<int>(decision.port))
      .Set("verdict", decision.verdict == EgressVerdict::kAllowed ? "allowed" : "denied")
      .Set("rule", decision.rule);
  if (!decision.address.empty()) event.Set("address", decision.address);
  if (!decision.answered_by.empty()) event.Set("answered_by", decision.answered_by);
  if (decision.scope) event.Set("scope", EgressScopeName(*decision.scope));
  event.Set("sent", static_cast<int64_t>(decision.bytes_sent))
      .Set("received", static_cast<int64_t>(decision.bytes_received));
  return event;
}

}  // namespace corral
