// The bash tool: one command line, run through the real sandbox.
//
// The call was admitted by the same gate as `corral run` (gate::Admit); this
// runs the AdmittedRun with RunConfined (run/run.h), its stdin /dev/null and
// its stdout and stderr one pipe that this process reads. The output the agent
// gets is capped (the first 64 KiB and the last 16 KiB, with how much was
// left out between), ANSI escapes stripped, CR and CRLF folded to LF, and
// the denial marker escaped (tools/tool_result.h). The policy's timeout kills
// the whole tree; so does a cancellation, through the RunWatcher the caller
// passes (its Controls() gets what kills the command's tree, warm or cold).
// With BashOptions::warm the command runs in the slot's warm sandbox, as an
// executor's calls do (exec/warm_sandbox.h: a fresh Landlock domain, its own
// session, nothing left from the call before; /tmp and HOME are the
// sandbox's and outlive the call).
//
// The result says who ended the run: the command (exit code; a non-zero exit
// is kFailed, with a sandbox denial the kernel reported under read-only mode
// marked kDenied), or corral (timeout, cancellation, a sandbox that could not
// start: kFailed or kDenied with the reason).
#pragma once

#include "gate/admit.h"
#include "run/run.h"
#include "run/warm_slot.h"
#include "tools/tool_result.h"

namespace corral::tools {

enum class Cancelled { kNo, kYes };

struct BashOptions {
  RunWatcher* watcher = nullptr;
  // Where the warm sandbox to run in is kept (run/warm_slot.h); a call it
  // refuses (busy with another call, lost, a policy it was not started
  // for) runs cold. Null: always cold.
  WarmSlot* warm = nullptr;
  // Asked after the run: whether it ended because it was cancelled.
  std::function<Cancelled()> cancelled;
  std::optional<std::string> state_home;  // RunOptions::state_home
};

ToolResult BashTool(gate::AdmittedRun run, const BashOptions& options);

// The output as the agent reads it: capped, ANSI stripped, CR/CRLF folded,
// every other control but LF and tab shown escaped (base/terminal.h's
// EscapeControls: a backspace, a C1 CSI, bytes that are not UTF-8), the
// marker escaped.
std::string SanitiseOutput(std::string_view head, std::string_view tail, uint64_t dropped);

}  // namespace corral::tools
