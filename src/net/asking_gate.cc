#include "net/asking_gate.h"

#include <pthread.h>
#include <signal.h>

#include "base/mutant.h"

namespace corral {

using Clock = std::chrono::steady_clock;

std::string_view EgressScopeName(EgressScope scope) {
  switch (scope) {
    case EgressScope::kConnection: return "connection";
    case EgressScope::kRun: return "run";
    case EgressScope::kSession: return "session";
  }
  return "connection";
}

namespace {

std::string ScopeWords(EgressScope scope) {
  switch (scope) {
    case EgressScope::kConnection: return "for this connection";
    case EgressScope::kRun: return "for this run";
    case EgressScope::kSession: return "for this session";
  }
  return "";
}

EgressRuling Allowed(const std::string& by, EgressScope scope) {
  EgressRuling ruling(EgressVerdict::kAllowed, "allowed by " + by + " " + ScopeWords(scope) + " (not in --allow-host)",
                      EgressBasis::kAnswered);
  ruling.answered_by = by;
  ruling.scope = scope;
  return ruling;
}

EgressRuling Refused(const std::string& by, const std::string& why) {
  EgressRuling ruling(EgressVerdict::kDenied, "not in --allow-host; " + why, EgressBasis::kAnswered);
  ruling.answered_by = by;
  return ruling;
}

}  // namespace

AskingGate::AskingGate(std::shared_ptr<const EgressGate> inner, EgressAsker asker, std::chrono::milliseconds timeout,
                       std::vector<HostAndPort> allowed_for_session)
    : inner_(std::move(inner)), asker_(std::move(asker)), timeout_(timeout) {
  for (HostAndPort& place : allowed_for_session) {
    remembered_[std::move(place)] = Remembered{"the session log", EgressScope::kSession};
  }
}

AskingGate::~AskingGate() {
  std::map<HostAndPort, Pending> waiting;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
    waiting.swap(pending_);
    queue_.clear();
  }
  queued_.notify_all();
  for (auto& [place, pending] : waiting) {
    EgressRuling refused = Refused("", "the run ended before an answer");
    for (auto& answered : pending.waiting) answered(refused);
  }
  if (thread_.joinable()) thread_.join();
}

EgressRuling AskingGate::Decide(const std::string& host, uint16_t port) const {
  EgressRuling ruling = inner_->Decide(host, port);
  if (ruling.basis != EgressBasis::kNotListed) return ruling;
  // An address literal corral would refuse anyway is refused now, unasked.
  if (Result<Address> literal = ParseAddress(host); literal.ok()) {
    if (Result<void> checked = inner_->CheckAddress(*literal); !checked.ok()) {
      return EgressRuling(EgressVerdict::kDenied, checked.error().message());
    }
  }
  std::lock_guard<std::mutex> lock(mutex_);
  auto known = remembered_.find({host, port});
  if (known != remembered_.end()) return Allowed(known->second.by, known->second.scope);
  ruling.basis = EgressBasis::kAsk;  // still kDenied: a refusal until someone answers
  return ruling;
}

Result<void> AskingGate::CheckAddress(const Address& address) const { return inner_->CheckAddress(address); }

size_t AskingGate::questions_asked() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return asked_;
}

void AskingGate::Ask(const std::string& host, uint16_t port, std::function<void(EgressRuling)> answered) const {
  if (MutantActive(Mutant::kEgressAskUnanswered)) return answered(Allowed("the egress_ask_unanswered mutant", EgressScope::kConnection));
  HostAndPort place{host, port};
  std::unique_lock<std::mutex> lock(mutex_);
  if (auto known = remembered_.find(place); known != remembered_.end()) {
    EgressRuling ruling = Allowed(known->second.by, known->second.scope);
    lock.unlock();
    return answered(ruling);
  }
  if (stopping_) {
    lock.unlock();
    return answered(Refused("", "the run ended before an answer"));
  }
  auto [entry, fresh] = pending_.try_emplace(place);
  entry->second.waiting.push_back(std::move(answered));
  if (!fresh) return;  // the same question waits already: asked once
  entry->second.since = Clock::now();
  queue_.push_back(place);
  if (!thread_.joinable()) {
    // Every signal blocked: corral's main thread takes the ones it forwards
    // with sigtimedwait, and one delivered here would end corral.
    sigset_t all, previous;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &previous);
    thread_ = std::thread([this] { AskInTurn(); });
    pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  }
  queued_.notify_one();
}

void AskingGate::AskInTurn() const {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    queued_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (stopping_) return;
    HostAndPort place = queue_.front();
    queue_.pop_front();
    auto pending = pending_.find(place);
    if (pending == pending_.end()) continue;
    const Clock::time_point deadline = pending->second.since + timeout_;
    const std::string seconds = std::to_string(timeout_.count() / 1000);
    EgressAnswerGiven given;
    if (Clock::now() >= deadline) {
      given.why = "no answer within " + seconds + " s (it waited behind other questions)";
    } else {
      ++asked_;
      lock.unlock();
      given = asker_(place.first, place.second, deadline);
      lock.lock();
      if (given.answer != EgressAnswer::kDeny && Clock::now() > deadline) {
        given = EgressAnswerGiven{EgressAnswer::kDeny, given.by, "the answer came after " + seconds + " s"};
      }
    }
    EgressRuling ruling;
    switch (given.answer) {
      case EgressAnswer::kDeny:
        ruling = Refused(given.by, given.why.empty() ? "denied by " + given.by : given.why);
        break;
      case EgressAnswer::kAllowConnection: ruling = Allowed(given.by, EgressScope::kConnection); break;
      case EgressAnswer::kAllowRun:
      case EgressAnswer::kAllowSession: {
        EgressScope scope = given.answer == EgressAnswer::kAllowRun ? EgressScope::kRun : EgressScope::kSession;
        if (!stopping_) remembered_[place] = Remembered{given.by, scope};
        ruling = Allowed(given.by, scope);
        break;
      }
    }
    // The destructor may have taken the waiting connections (and refused
    // them) while the question was open.
    auto still = pending_.find(place);
    if (still == pending_.end()) continue;
    std::vector<std::function<void(EgressRuling)>> waiting = std::move(still->second.waiting);
    pending_.erase(still);
    lock.unlock();
    for (auto& answered : waiting) answered(ruling);
    lock.lock();
  }
}

}  // namespace corral
