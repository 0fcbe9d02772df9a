// RunnerFailureRule: tells "the sandbox runner failed, nothing ran" apart
// from "the command ran and exited non-zero", from the outside, using only
// the exit code and stderr a harness already has.
//
// A runner failure is an infrastructure problem (retry, alert, report the
// host); a command failure is a normal outcome for the model to read. Each
// backend publishes its rules in its ConfinedArgv (see provider.h).
//
// Matches applies three stages, in this order:
//   1. exit-code gate: exit 0 never matches; when allowed_exit_codes is not
//      empty, a code outside it never matches;
//   2. every stderr line equal to an informational line (both trimmed,
//      compared case-insensitively) is dropped, so a benign warning cannot
//      decide the outcome;
//   3. the remaining lines are searched, case-insensitively, for each fatal
//      signature in order; the first one found is returned. The order is
//      the signatures' (the backend lists its most specific first), not the
//      lines': which signature matched is part of the answer, and a stable
//      choice does not depend on how the runner happened to order its lines.
//      Whether anything matches is the same either way.
//
//   RunnerFailureRule rule{{125}, {"the command was not run"}, {}};
//   rule.Matches(125, "corral: landlock: ...; the command was not run\n");
//     // -> "the command was not run"
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace corral {

struct RunnerFailureRule {
  std::vector<int> allowed_exit_codes;         // empty: any non-zero code may be a runner failure
  std::vector<std::string> fatal_signatures;   // substrings that confirm a runner failure
  std::vector<std::string> informational_lines;  // whole lines ignored before matching

  // The fatal signature that matched, or nullopt.
  std::optional<std::string> Matches(int exit_code, std::string_view stderr_text) const;

  bool operator==(const RunnerFailureRule&) const = default;
};

}  // namespace corral
