#include "tools/bash_tool.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <thread>

#include "base/terminal.h"
#include "gate/escalation.h"

namespace corral::tools {
namespace {

constexpr size_t kHeadCap = 64 << 10;
constexpr size_t kTailCap = 16 << 10;

// Drains a pipe: keeps the first kHeadCap bytes and the last kTailCap.
struct Capture {
  std::string head;
  std::string tail;
  uint64_t dropped = 0;
  void Add(const char* data, size_t size) {
    size_t to_head = std::min(size, kHeadCap - head.size());
    head.append(data, to_head);
    data += to_head;
    size -= to_head;
    if (size == 0) return;
    tail.append(data, size);
    if (tail.size() > kTailCap) {
      dropped += tail.size() - kTailCap;
      tail.erase(0, tail.size() - kTailCap);
    }
  }
};

}  // namespace

std::string SanitiseOutput(std::string_view head, std::string_view tail, uint64_t dropped) {
  std::string text(head);
  if (dropped > 0) text += "\n[... " + std::to_string(dropped) + " bytes of output left out ...]\n";
  text += tail;
  // What StripANSI leaves that a terminal still obeys (a backspace, a C1 CSI
  // as U+009B or as a raw byte, DEL) is shown escaped; line breaks and tabs stay.
  std::string folded = NormalizeText(StripANSI(text));
  std::string shown;
  size_t start = 0;
  while (start <= folded.size()) {
    size_t end = folded.find_first_of("\n\t", start);
    if (end == std::string::npos) end = folded.size();
    shown += EscapeControls(std::string_view(folded).substr(start, end - start));
    if (end < folded.size()) shown += folded[end];
    start = end + 1;
  }
  return EscapeMarker(shown);
}

ToolResult BashTool(gate::AdmittedRun run, const BashOptions& options) {
  Mode mode = run.policy().mode();
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return Failure("bash: cannot create a pipe");
  UniqueFd read_end(fds[0]), write_end(fds[1]);
  UniqueFd null(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  if (!null) return Failure("bash: cannot open /dev/null");
  Capture capture;
  std::thread reader([&capture, fd = read_end.get()] {
    char buffer[65536];
    for (;;) {
      ssize_t n = ::read(fd, buffer, sizeof buffer);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      capture.Add(buffer, static_cast<size_t>(n));
    }
  });
  RunOptions run_options;
  run_options.forward_signals = false;
  run_options.stdin_fd = null.get();
  run_options.stdout_fd = write_end.get();
  run_options.stderr_fd = write_end.get();
  run_options.watcher = options.watcher;
  run_options.state_home = options.state_home;
  std::shared_ptr<WarmSandbox> warm =
      options.warm != nullptr && !run.policy().unconfined() ? options.warm->For(run.policy()) : nullptr;
  run_options.warm = warm.get();
  run_options.warm_refusal = WarmRefusal::kRunCold;
  RunResult result = RunConfined(std::move(run), run_options);
  if (options.warm != nullptr) options.warm->After(warm, result.cold_because);
  write_end.Reset();  // every process of the sandbox is gone: EOF follows
  reader.join();
  std::string output = SanitiseOutput(capture.head, capture.tail, capture.dropped);
  nlohmann::json data = {{"output_bytes", capture.head.size() + capture.tail.size() + capture.dropped},
                         {"stopped_early", capture.dropped > 0}};
  if (options.cancelled && options.cancelled() == Cancelled::kYes) {
    data["cancelled"] = true;
    ToolResult failed = Failure("bash: cancelled; the whole process tree was killed\n" + output);
    failed.data = data;
    failed.reason = "cancelled";
    return failed;
  }
  if (result.source == RunResult::Source::kCorral) {
    std::string why = result.error ? result.error->ToString() : "the sandbox ended the run";
    data["source"] = "corral";
    ToolResult out = result.error && result.error->kind() == ErrorKind::kDenied ? Denial(mode, why)
                                                                                 : Failure("bash: " + why + "\n" + output);
    out.data = data;
    out.reason = "bash: " + why;  // the audit record: never the command's output
    return out;
  }
  data["source"] = "command";
  data["exit_code"] = result.exit_status;
  std::string text = output + (output.empty() || output.back() == '\n' ? "" : "\n") + "[exit code " +
                     std::to_string(result.exit_status) + "]";
  if (result.denial) {
    data["denied"] = true;
    ToolResult denied = Denial(mode, "the command failed on a sandbox denial (\"" + *result.denial + "\")\n" + text);
    denied.data = data;
    denied.reason = "the command failed on a sandbox denial";  // the line matched is output
    return denied;
  }
  if (result.exit_status != 0) {
    ToolResult failed = Failure(text);
    failed.data = data;
    failed.reason = "exit code " + std::to_string(result.exit_status);
    return failed;
  }
  return Ok(text, data);
}

}  // namespace corral::tools
