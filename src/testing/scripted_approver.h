// A test's approver: it plays back scripted answers, in order, and records
// each question it was asked. Out of answers, it answers with an error (as a
// terminal approver that cannot ask would), so a test that asks more than it
// scripted sees a refusal, never a yes.
#pragma once

#include <deque>
#include <utility>
#include <vector>

#include "gate/approval.h"

namespace corral::testing {

class ScriptedApprover : public Approver {
 public:
  explicit ScriptedApprover(std::deque<Result<ApprovalAnswer>> answers = {}) : answers_(std::move(answers)) {}
  Result<ApprovalAnswer> Request(const ApprovalRequest& request) override {
    asked.push_back(request);
    if (answers_.empty()) return Error(ErrorKind::kInternal, "the scripted approver ran out of answers");
    Result<ApprovalAnswer> answer = std::move(answers_.front());
    answers_.pop_front();
    return answer;
  }
  std::vector<ApprovalRequest> asked;

 private:
  std::deque<Result<ApprovalAnswer>> answers_;
};

}  // namespace corral::testing
