#include "cli/refusal.h"

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/policy_flags.h"
#include "base/exit_codes.h"

namespace corral::cli {

int ReportRefusal(const Error& error, RefusalFormat format, std::string_view prefix) {
  PrintError(std::string(prefix) + error.ToString() + (error.code().empty() ? "" : " [" + error.code() + "]"));
  if (format == RefusalFormat::kJson) {
    // A harness can always switch on the code: the kind's name stands in for
    // an error that has no more specific one.
    std::string code = error.code().empty() ? std::string(ErrorKindName(error.kind())) : error.code();
    nlohmann::json out = {{"error", {{"kind", ErrorKindName(error.kind())}, {"code", code}, {"message", error.ToString()}}}};
    std::printf("%s\n", out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
  }
  return ExitCodeFor(error.kind());
}

}  // namespace corral::cli
