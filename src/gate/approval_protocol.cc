#include "gate/approval_protocol.h"

#include <nlohmann/json.hpp>
#include <set>

#include "base/json_bytes.h"
#include "base/mutant.h"
#include "state/session_events.h"

namespace corral {
namespace {

using Json = nlohmann::json;

Error Bad(std::string_view code, std::string message) {
  return Error(ErrorKind::kDenied, "approval channel: " + std::move(message)).WithCode(std::string(code));
}

constexpr std::string_view kMalformed = "approval_channel_malformed";

Json OrNull(const std::string& text) { return text.empty() ? Json(nullptr) : Json(text); }

}  // namespace

std::string ApprovalRequestLine(const ApprovalRequest& request, std::string_view id) {
  Json answers = Json::array({"allow-once"});
  if (request.run_answer == RunAnswer::kOffered) answers.push_back("allow-for-run");
  if (request.session_answer == SessionAnswer::kOffered) answers.push_back("allow-for-session");
  answers.push_back("deny");
  nlohmann::ordered_json line;
  line["v"] = kApprovalProtocolVersion;
  line["type"] = "approval/request";
  line["id"] = std::string(id);
  line["kind"] = std::string(QuestionKindName(request.kind));
  line["argv"] = EncodeBytes(Json(request.argv));
  line["action"] = EncodeBytes(Json(request.summary));
  line["class"] = request.class_key;
  line["why"] = EncodeBytes(Json(request.rationale));
  line["policy"] = request.context.policy;
  line["mode"] = request.context.mode;
  line["cwd"] = EncodeBytes(Json(request.context.cwd));
  line["workspace"] = EncodeBytes(OrNull(request.context.workspace));
  line["session"] = OrNull(request.context.session);
  if (request.kind == QuestionKind::kNetwork) {
    line["host"] = EncodeBytes(Json(request.host));
    line["port"] = request.port;
  }
  line["answers"] = std::move(answers);
  // EncodeBytes left only valid UTF-8; ASCII keeps the line one line.
  return line.dump(-1, ' ', /*ensure_ascii=*/true, nlohmann::ordered_json::error_handler_t::replace);
}

Result<ApprovalAnswer> ParseApprovalAnswer(std::string_view line, std::string_view id, SessionAnswer offered,
                                           RunAnswer run_offered) {
  if (MutantActive(Mutant::kApprovalAnswerParse)) return ApprovalAnswer::kAllowOnce;
  if (line.size() > kMaxAnswerLineBytes) {
    return Bad("approval_channel_oversize",
               "an answer line longer than " + std::to_string(kMaxAnswerLineBytes) + " bytes");
  }
  // A key twice ({"answer":"deny","answer":"allow-once"}) has no one meaning:
  // refused, not read as its last value.
  std::set<std::string> top_keys;
  bool repeated = false;
  Json::parser_callback_t note_keys = [&](int depth, Json::parse_event_t event, Json& parsed) {
    if (depth == 1 && event == Json::parse_event_t::key && !top_keys.insert(parsed.get<std::string>()).second) {
      repeated = true;
    }
    return true;
  };
  Json json = Json::parse(line, note_keys, /*allow_exceptions=*/false);
  if (json.is_discarded()) return Bad(kMalformed, "the answer " + QuoteForError(line) + " is not JSON");
  if (repeated) return Bad(kMalformed, "the answer " + QuoteForError(line) + " repeats a key");
  if (!json.is_object()) return Bad(kMalformed, std::string("the answer must be a JSON object, not ") + json.type_name());
  for (const auto& item : json.items()) {
    if (item.key() != "v" && item.key() != "id" && item.key() != "answer") {
      return Bad(kMalformed, "unknown key " + QuoteForError(item.key()) + " in the answer (expected v, id, answer)");
    }
  }
  auto version = json.find("v");
  if (version == json.end() || !version->is_number_integer() || version->get<int64_t>() != kApprovalProtocolVersion) {
    return Bad(kMalformed, "the answer's \"v\" must be 1");
  }
  auto answer_id = json.find("id");
  if (answer_id == json.end() || !answer_id->is_string()) return Bad(kMalformed, "the answer has no string \"id\"");
  if (answer_id->get_ref<const std::string&>() != id) {
    return Bad("approval_channel_wrong_id", "the answer is for id " + QuoteForError(answer_id->get<std::string>()) +
                                                ", not for the question asked (" + std::string(id) + ")");
  }
  auto answer = json.find("answer");
  if (answer == json.end() || !answer->is_string()) return Bad(kMalformed, "the answer has no string \"answer\"");
  const std::string& text = answer->get_ref<const std::string&>();
  if (text == "allow-once") return ApprovalAnswer::kAllowOnce;
  if (text == "deny") return ApprovalAnswer::kDeny;
  if (text == "allow-for-session") {
    if (offered == SessionAnswer::kOffered) return ApprovalAnswer::kAllowForSession;
    return Bad("approval_answer_not_offered",
               "allow-for-session was not offered (the run has no --session, or the question is not an approval)");
  }
  if (text == "allow-for-run") {
    if (run_offered == RunAnswer::kOffered) return ApprovalAnswer::kAllowForRun;
    return Bad("approval_answer_not_offered", "allow-for-run was not offered (only a network question offers it)");
  }
  return Bad("approval_channel_unknown_answer",
             "unknown answer " + QuoteForError(text) +
                 " (expected allow-once, allow-for-run, allow-for-session or deny, as the question offered)");
}

}  // namespace corral
