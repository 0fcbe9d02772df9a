// How a subcommand that can answer in JSON (`wrap`, `explain`) reports a
// refusal: one line on stderr, "corral: <prefix><message> [<code>]", and,
// with --json, the same error on stdout as
//
//   {"error": {"kind": "unsupported", "code": "partial_enforcement", "message": "..."}}
//
// so a harness learns why from stdout alone. "code" is never empty: an error
// without a specific code carries its kind's name there ("usage", "policy"). Returns corral's exit code for
// the error (base/exit_codes.h).
#pragma once

#include <string_view>

#include "base/result.h"

namespace corral::cli {

enum class RefusalFormat {
  kText,  // stderr only
  kJson,  // stderr, and the error object on stdout
};

int ReportRefusal(const Error& error, RefusalFormat format, std::string_view prefix = {});

}  // namespace corral::cli
