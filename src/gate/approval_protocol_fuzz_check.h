// The property the approval channel's answer parser (approval_protocol.h)
// must hold on any line, shared by the libFuzzer harness
// (approval_protocol_fuzz.cc) and its deterministic smoke test:
//   - it never crashes (sanitizers judge that);
//   - a rejection is ErrorKind::kDenied, with one of the documented codes,
//     a message starting "approval channel: " and holding printable ASCII only;
//   - an acceptance comes from a line of at most kMaxAnswerLineBytes that is
//     a JSON object whose "id" is the question's; allow-for-session and
//     allow-for-run only when offered; the same line asked with another id
//     is refused.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "gate/approval_protocol.h"

namespace corral::testing {

inline constexpr std::string_view kFuzzQuestionId = "00112233445566778899aabb";

inline std::optional<std::string> CheckOneAnswer(std::string_view line, SessionAnswer offered, RunAnswer run_offered) {
  Result<ApprovalAnswer> answer = ParseApprovalAnswer(line, kFuzzQuestionId, offered, run_offered);
  if (!answer.ok()) {
    const Error& error = answer.error();
    if (error.kind() != ErrorKind::kDenied) return "rejection of kind " + std::string(ErrorKindName(error.kind()));
    const std::string& code = error.code();
    if (code != "approval_channel_oversize" && code != "approval_channel_malformed" &&
        code != "approval_channel_wrong_id" && code != "approval_channel_unknown_answer" &&
        code != "approval_answer_not_offered") {
      return "rejection with an undocumented code: " + code;
    }
    if (error.message().rfind("approval channel: ", 0) != 0) return "rejection not naming the channel: " + code;
    for (char c : error.message()) {
      if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) > 0x7e) {
        return "rejection message with a byte that is not printable ASCII";
      }
    }
    return std::nullopt;
  }
  if (line.size() > kMaxAnswerLineBytes) return "accepted an oversize line";
  nlohmann::json json = nlohmann::json::parse(line, nullptr, false);
  if (json.is_discarded() || !json.is_object()) return "accepted a line that is not a JSON object";
  auto id = json.find("id");
  if (id == json.end() || !id->is_string() || id->get<std::string>() != kFuzzQuestionId) {
    return "accepted an answer without the question's id";
  }
  if (*answer == ApprovalAnswer::kAllowForSession && offered == SessionAnswer::kNotOffered) {
    return "accepted allow-for-session where it was not offered";
  }
  if (*answer == ApprovalAnswer::kAllowForRun && run_offered == RunAnswer::kNotOffered) {
    return "accepted allow-for-run where it was not offered";
  }
  if (ParseApprovalAnswer(line, "ffeeddccbbaa998877665544", offered, run_offered).ok()) return "accepted under another id";
  return std::nullopt;
}

// nullopt when the property holds for `line`, asked with and without the
// session answer and the run answer (a network question's) offered;
// otherwise what broke.
inline std::optional<std::string> CheckApprovalAnswerParser(std::string_view line) {
  for (SessionAnswer session : {SessionAnswer::kOffered, SessionAnswer::kNotOffered}) {
    for (RunAnswer run : {RunAnswer::kOffered, RunAnswer::kNotOffered}) {
      if (std::optional<std::string> bad = CheckOneAnswer(line, session, run)) return bad;
    }
  }
  return std::nullopt;
}

}  // namespace corral::testing
