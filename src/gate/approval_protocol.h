// The approval channel's wire format: one JSON object per line each way,
// for a harness that answers corral's questions instead of a person at the
// terminal (ChannelApprover, channel_approver.h; the user's guide is
// docs/approval.md).
//
// corral writes one request line and reads one answer line per question:
//   -> {"v":1,"type":"approval/request","id":"9f3c...","kind":"approval",
//       "argv":["rm","-rf","x"],"action":"command: rm -rf x","class":"command:rm-rf",
//       "why":"...","policy":"ask-dangerous","mode":"workspace-write","cwd":"/src/app",
//       "workspace":"/src/app","session":"abc"|null,
//       "answers":["allow-once","allow-for-session","deny"]}
//   <- {"v":1,"id":"9f3c...","answer":"allow-once"}
// `kind` is approval, escalation, grant or network; `answers` lists what may
// be answered (allow-for-session only for an approval or network question in
// a session; allow-for-run only for a network question). A network question
// (a running command's connection to a host no --allow-host names, held
// until the answer) also carries the place, and its argv is the command's:
//   -> {"v":1,"type":"approval/request","id":"...","kind":"network",...,
//       "class":"network:registry.npmjs.org:443","host":"registry.npmjs.org","port":443,
//       "answers":["allow-once","allow-for-run","allow-for-session","deny"]}
// There allow-once allows this connection, allow-for-run the host and port
// for the rest of the run, allow-for-session for the rest of the session.
// An argv word or path that is not UTF-8 is {"bytes_hex":"..."}
// (base/json_bytes.h), so the request names the bytes that would run.
//
// ParseApprovalAnswer is strict: exactly the keys v, id and answer, v 1, the
// request's own id, one of the offered answers, at most kMaxAnswerLineBytes.
// Anything else is an Error (ErrorKind::kDenied), so the gate denies:
//   approval_channel_oversize        the line is longer than the cap
//   approval_channel_malformed       not JSON, not an object, a missing,
//                                    unknown or mistyped key, another version
//   approval_channel_wrong_id        an answer to another question
//   approval_channel_unknown_answer  an answer that is not one of the four
//   approval_answer_not_offered      allow-for-session or allow-for-run where
//                                    it was not offered
// Messages quote the line's content as escaped ASCII only (QuoteForError).
#pragma once

#include <string>
#include <string_view>

#include "base/result.h"
#include "gate/approval.h"

namespace corral {

inline constexpr int kApprovalProtocolVersion = 1;
// The longest answer line corral reads, without its '\n'.
inline constexpr size_t kMaxAnswerLineBytes = 4096;

// The request line for `request`, asked as `id`, without the trailing '\n'.
std::string ApprovalRequestLine(const ApprovalRequest& request, std::string_view id);

// One answer line (without its '\n') to the request `id`.
Result<ApprovalAnswer> ParseApprovalAnswer(std::string_view line, std::string_view id, SessionAnswer offered,
                                           RunAnswer run_offered = RunAnswer::kNotOffered);

}  // namespace corral
