#include "gate/network_approval.h"

#include <charconv>

namespace corral::gate {

std::string NetworkClassKey(const std::string& host, uint16_t port) {
  return "network:" + host + ":" + std::to_string(port);
}

NetworkApprover::NetworkApprover(Approver& approver, ApprovalContext context, std::optional<Session> session, Mode mode,
                                 std::vector<std::string> argv, std::chrono::milliseconds timeout)
    : approver_(approver),
      context_(std::move(context)),
      session_(std::move(session)),
      mode_(mode),
      argv_(std::move(argv)),
      timeout_(timeout) {}

NetworkAnswer NetworkApprover::Ask(const std::string& host, uint16_t port,
                                   std::chrono::steady_clock::time_point deadline) {
  const std::string place = host + ":" + std::to_string(port);
  ApprovalRequest question;
  question.kind = QuestionKind::kNetwork;
  question.summary = "a connection to " + place + " from: " + Action::Command(argv_).Summary();
  question.rationale = place + " is not in --allow-host, and the approval policy " + context_.policy + " asks";
  question.class_key = NetworkClassKey(host, port);
  question.argv = argv_;
  question.context = context_;
  question.host = host;
  question.port = port;
  question.run_answer = RunAnswer::kOffered;
  if (session_ && IsSessionApprovalClass(question.class_key)) question.session_answer = SessionAnswer::kOffered;
  question.deadline = deadline;
  NetworkAnswer answer;
  answer.by = approver_.Who();
  Result<ApprovalAnswer> given = approver_.Request(question);
  if (!given.ok()) {
    const std::string& code = given.error().code();
    bool late = code == "approval_channel_timeout" || code == "approval_tty_timeout" ||
                std::chrono::steady_clock::now() >= deadline;
    answer.why = late ? "no answer within " + std::to_string(timeout_.count() / 1000) +
                            " s (--network-approval-timeout)"
                      : "nobody could answer: " + given.error().message();
    return answer;
  }
  if (*given == ApprovalAnswer::kAllowForSession && question.session_answer != SessionAnswer::kOffered) {
    answer.why = "allow-for-session was not offered";
    return answer;
  }
  if (*given == ApprovalAnswer::kAllowForSession) {
    Status recorded = session_->RecordApproval(ApprovalAllowData{question.class_key, mode_, context_.workspace});
    if (!recorded.ok()) {
      answer.why = "allowed for the session, but recording it in the session log failed (" +
                   recorded.error().ToString() + ")";
      return answer;
    }
  }
  answer.answer = *given;
  if (answer.answer == ApprovalAnswer::kDeny) answer.why = "denied by " + answer.by;
  return answer;
}

std::vector<std::pair<std::string, uint16_t>> NetworkApprover::AllowedForSession() const {
  std::vector<std::pair<std::string, uint16_t>> places;
  if (!session_) return places;
  constexpr std::string_view kPrefix = "network:";
  for (const std::string& key : session_->allowed_classes(mode_, context_.workspace)) {
    if (key.rfind(kPrefix, 0) != 0) continue;
    size_t colon = key.rfind(':');
    if (colon == std::string::npos || colon <= kPrefix.size()) continue;
    unsigned port = 0;
    const char* first = key.data() + colon + 1;
    const char* last = key.data() + key.size();
    auto [end, error] = std::from_chars(first, last, port);
    if (error != std::errc() || end != last || port == 0 || port > 65535) continue;
    places.emplace_back(key.substr(kPrefix.size(), colon - kPrefix.size()), static_cast<uint16_t>(port));
  }
  return places;
}

}  // namespace corral::gate
