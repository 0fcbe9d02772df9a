// The C API (include/corral/corral.h) over the executor library: handles
// that own C++ objects, errors as a code and a malloc'd message. Only the
// corral_* functions are exported (src/capi/exports.map).
#include <corral/corral.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "executor/executor.h"
#include "executor/process.h"

using corral::Error;
using corral::Result;
using corral::executor::ExecutorErrc;

// The C numbers are the C++ enums' (plus one for the errors: 0 is CORRAL_OK).
static_assert(static_cast<int>(ExecutorErrc::kExecutorLimit) + 1 == CORRAL_E_EXECUTOR_LIMIT);
static_assert(static_cast<int>(ExecutorErrc::kRefusedByGate) + 1 == CORRAL_E_REFUSED_BY_GATE);
static_assert(static_cast<int>(ExecutorErrc::kCommandNotFound) + 1 == CORRAL_E_COMMAND_NOT_FOUND);
static_assert(static_cast<int>(ExecutorErrc::kInternal) + 1 == CORRAL_E_INTERNAL);
static_assert(static_cast<int>(corral::executor::EndedBy::kSignal) == CORRAL_ENDED_BY_SIGNAL);
static_assert(static_cast<int>(corral::executor::EndedBy::kDeadline) == CORRAL_ENDED_BY_DEADLINE);

struct corral_policy {
  corral::executor::ExecutorPolicy policy;
};
struct corral_set {
  std::unique_ptr<corral::executor::ExecutorSet> set;
};
struct corral_process {
  std::unique_ptr<corral::executor::Process> process;
  std::vector<std::string> protected_left;  // as the wait found it
  std::vector<const char*> protected_left_view;
};

namespace {

char* Duplicate(const std::string& text) {
  char* copy = static_cast<char*>(std::malloc(text.size() + 1));
  if (copy == nullptr) return nullptr;
  std::memcpy(copy, text.data(), text.size());
  copy[text.size()] = '\0';
  return copy;
}

int Fail(const Error& error, char** message) {
  if (message != nullptr) *message = Duplicate(error.ToString());
  return static_cast<int>(corral::executor::ExecutorErrcOf(error)) + 1;
}

int Fail(ExecutorErrc errc, const std::string& text, char** message) {
  return Fail(corral::executor::ExecutorError(errc, text), message);
}

int Succeed(char** message) {
  if (message != nullptr) *message = nullptr;
  return CORRAL_OK;
}

std::vector<std::string> Strings(const char* const* list) {
  std::vector<std::string> out;
  for (; list != nullptr && *list != nullptr; ++list) out.emplace_back(*list);
  return out;
}

int MakePolicy(const char* text, const char* workspace, bool json, corral_policy** out, char** error) {
  if (out == nullptr) return Fail(ExecutorErrc::kInvalidArgument, "no place for the policy", error);
  *out = nullptr;
  Result<corral::HostContext> host = corral::CaptureHostContext();
  if (!host.ok()) return Fail(host.error(), error);
  auto policy = std::make_unique<corral_policy>();
  policy->policy.host = std::move(host).value();
  if (workspace != nullptr && *workspace != '\0') policy->policy.request.overrides.workspace = workspace;
  if (text != nullptr) {
    if (json) {
      Result<std::string> toml = corral::executor::ConfigJsonToToml(text);
      if (!toml.ok()) return Fail(toml.error(), error);
      policy->policy.config_toml = *toml;
    } else {
      policy->policy.config_toml = text;
    }
  }
  *out = policy.release();
  return Succeed(error);
}

int Report(const Result<corral::executor::RunOutput>& output, corral_run_result* out, char** error) {
  if (!output.ok()) return Fail(output.error(), error);
  out->stdout_data = Duplicate(output->stdout_bytes);
  out->stdout_len = output->stdout_bytes.size();
  out->stderr_data = Duplicate(output->stderr_bytes);
  out->stderr_len = output->stderr_bytes.size();
  out->exit_code = output->exit_code;
  out->signal = output->signal.value_or(0);
  out->output_limit = output->output_limit ? 1 : 0;
  if (!output->protected_left.empty()) {
    // What the sweep left is never dropped: without memory for it the call fails.
    out->protected_left = static_cast<char**>(std::calloc(output->protected_left.size(), sizeof(char*)));
    for (size_t i = 0; out->protected_left != nullptr && i < output->protected_left.size(); ++i) {
      out->protected_left[out->protected_left_count] = Duplicate(output->protected_left[i]);
      if (out->protected_left[out->protected_left_count] == nullptr) break;
      ++out->protected_left_count;
    }
    if (out->protected_left_count != output->protected_left.size()) {
      corral_run_result_free(out);
      return Fail(ExecutorErrc::kInternal, "out of memory for the protected paths the sweep left", error);
    }
  }
  return Succeed(error);
}

int Descriptor(const Result<int>& fd, int* out, char** error) {
  if (!fd.ok()) return Fail(fd.error(), error);
  if (out != nullptr) *out = *fd;
  return Succeed(error);
}

}  // namespace

extern "C" {

const char* corral_errc_name(int errc) {
  if (errc == CORRAL_OK) return "ok";
  if (errc < CORRAL_E_EXECUTOR_LIMIT || errc > CORRAL_E_INTERNAL) return "unknown";
  return corral::executor::ExecutorErrcName(static_cast<ExecutorErrc>(errc - 1)).data();
}

void corral_string_free(char* text) { std::free(text); }

int corral_policy_from_toml(const char* text, const char* workspace, corral_policy** out, char** error) {
  return MakePolicy(text, workspace, false, out, error);
}

int corral_policy_from_json(const char* text, const char* workspace, corral_policy** out, char** error) {
  return MakePolicy(text, workspace, true, out, error);
}

void corral_policy_free(corral_policy* policy) { delete policy; }

int corral_set_create(const corral_policy* policy, const char* scratch_root, int max_executors, corral_set** out,
                      char** error) {
  if (policy == nullptr || out == nullptr) return Fail(ExecutorErrc::kInvalidArgument, "no policy or no place for the set", error);
  *out = nullptr;
  corral::executor::ExecutorSetOptions options;
  if (scratch_root != nullptr) options.scratch_root = scratch_root;
  if (max_executors > 0) options.max_executors = max_executors;
  corral::executor::ExecutorPolicy copy;
  copy.request = policy->policy.request;
  copy.host = policy->policy.host;
  copy.config_toml = policy->policy.config_toml;
  auto set = corral::executor::ExecutorSet::Create(std::move(copy), std::move(options));
  if (!set.ok()) return Fail(set.error(), error);
  *out = new corral_set{std::move(set).value()};
  return Succeed(error);
}

int corral_set_executor(corral_set* set, const char* key, corral_executor** out, char** error) {
  if (set == nullptr || key == nullptr || out == nullptr) return Fail(ExecutorErrc::kInvalidArgument, "no set or key", error);
  *out = nullptr;
  Result<corral::executor::Executor*> executor = set->set->For(key);
  if (!executor.ok()) return Fail(executor.error(), error);
  // The handle is the executor itself: the set owns both.
  *out = reinterpret_cast<corral_executor*>(*executor);
  return Succeed(error);
}

void corral_set_close(corral_set* set) {
  if (set != nullptr) set->set->Close();
}

void corral_set_free(corral_set* set) { delete set; }

}  // extern "C"

namespace {
corral::executor::Executor* Of(const corral_executor* handle) {
  return reinterpret_cast<corral::executor::Executor*>(const_cast<corral_executor*>(handle));
}
}  // namespace

extern "C" {

int corral_executor_level(const corral_executor* executor) {
  return executor == nullptr ? 2 : static_cast<int>(Of(executor)->level());
}

char* corral_executor_report(const corral_executor* executor) {
  return executor == nullptr ? nullptr : Duplicate(Of(executor)->Report());
}

const char* corral_executor_home(const corral_executor* executor) {
  return executor == nullptr ? nullptr : Of(executor)->home().c_str();
}

const char* corral_executor_tmpdir(const corral_executor* executor) {
  return executor == nullptr ? nullptr : Of(executor)->tmpdir().c_str();
}

int corral_run_argv(corral_executor* executor, const char* cwd, const char* const* argv, size_t max_output,
                    corral_run_result* out, char** error) {
  if (executor == nullptr || out == nullptr) return Fail(ExecutorErrc::kInvalidArgument, "no executor or no result", error);
  *out = corral_run_result{};
  std::string dir = cwd != nullptr ? cwd : "";
  std::vector<std::string> args = Strings(argv);
  return Report(max_output > 0 ? Of(executor)->RunArgvLimited(dir, args, max_output) : Of(executor)->RunArgv(dir, args),
                out, error);
}

int corral_run_command(corral_executor* executor, const char* cwd, const char* shell, size_t max_output,
                       corral_run_result* out, char** error) {
  if (shell == nullptr) return Fail(ExecutorErrc::kInvalidArgument, "no command", error);
  const char* argv[] = {"/bin/sh", "-c", shell, nullptr};
  return corral_run_argv(executor, cwd, argv, max_output, out, error);
}

void corral_run_result_free(corral_run_result* result) {
  if (result == nullptr) return;
  std::free(result->stdout_data);
  std::free(result->stderr_data);
  for (size_t i = 0; i < result->protected_left_count; ++i) std::free(result->protected_left[i]);
  std::free(result->protected_left);
  *result = corral_run_result{};
}

int corral_process_prepare(corral_executor* executor, const corral_process_options* options, corral_process** out,
                           char** error) {
  if (executor == nullptr || options == nullptr || out == nullptr) {
    return Fail(ExecutorErrc::kInvalidArgument, "no executor, options or place for the process", error);
  }
  *out = nullptr;
  corral::executor::ProcessOptions prepared;
  prepared.dir = options->dir != nullptr ? options->dir : "";
  prepared.argv = Strings(options->argv);
  for (const std::string& entry : Strings(options->env)) {
    size_t eq = entry.find('=');
    if (eq == std::string::npos) return Fail(ExecutorErrc::kInvalidArgument, "not NAME=value: " + entry, error);
    prepared.env.emplace_back(entry.substr(0, eq), entry.substr(eq + 1));
  }
  prepared.tty = options->tty != 0 ? corral::executor::Tty::kYes : corral::executor::Tty::kNo;
  if (options->rows != 0) prepared.rows = options->rows;
  if (options->columns != 0) prepared.columns = options->columns;
  if (options->deadline_ms > 0) prepared.deadline = std::chrono::milliseconds(options->deadline_ms);
  if (options->terminate_grace_ms > 0) prepared.terminate_grace = std::chrono::milliseconds(options->terminate_grace_ms);
  auto process = Of(executor)->PrepareProcess(std::move(prepared));
  if (!process.ok()) return Fail(process.error(), error);
  *out = new corral_process{std::move(process).value(), {}, {}};
  return Succeed(error);
}

#define CORRAL_PROCESS_OR_FAIL(process, error) \
  if ((process) == nullptr) return Fail(ExecutorErrc::kInvalidArgument, "no process", error)

int corral_process_start(corral_process* process, char** error) {
  CORRAL_PROCESS_OR_FAIL(process, error);
  Result<void> started = process->process->Start();
  return started.ok() ? Succeed(error) : Fail(started.error(), error);
}

int corral_process_stdin(corral_process* process, int* fd, char** error) {
  CORRAL_PROCESS_OR_FAIL(process, error);
  return Descriptor(process->process->Stdin(), fd, error);
}

int corral_process_stdout(corral_process* process, int* fd, char** error) {
  CORRAL_PROCESS_OR_FAIL(process, error);
  return Descriptor(process->process->Stdout(), fd, error);
}

int corral_process_stderr(corral_process* process, int* fd, char** error) {
  CORRAL_PROCESS_OR_FAIL(process, error);
  return Descriptor(process->process->Stderr(), fd, error);
}

int corral_process_pty(corral_process* process, int* fd, char** error) {
  CORRAL_PROCESS_OR_FAIL(process, error);
  return Descriptor(process->process->Pty(), fd, error);
}

int corral_process_close_stdin(corral_process* process, char** error) {
  CORRAL_PROCESS_OR_FAIL(process, error);
  Result<void> closed = process->process->CloseStdin();
  return closed.ok() ? Succeed(error) : Fail(closed.error(), error);
}

int corral_process_resize(corral_process* process, unsigned short rows, unsigned short columns, char** error) {
  CORRAL_PROCESS_OR_FAIL(process, error);
  Result<void> resized = process->process->Resize(rows, columns);
  return resized.ok() ? Succeed(error) : Fail(resized.error(), error);
}

int corral_process_signal(corral_process* process, int which, char** error) {
  CORRAL_PROCESS_OR_FAIL(process, error);
  corral::executor::ProcessSignal signal;
  switch (which) {
    case CORRAL_SIGNAL_INTERRUPT: signal = corral::executor::ProcessSignal::kInterrupt; break;
    case CORRAL_SIGNAL_TERMINATE: signal = corral::executor::ProcessSignal::kTerminate; break;
    case CORRAL_SIGNAL_KILL: signal = corral::executor::ProcessSignal::kKill; break;
    default: return Fail(ExecutorErrc::kInvalidArgument, "not a CORRAL_SIGNAL_*: " + std::to_string(which), error);
  }
  Result<void> sent = process->process->Signal(signal);
  return sent.ok() ? Succeed(error) : Fail(sent.error(), error);
}

int corral_process_wait(corral_process* process, int* exit_code, int* signal, int* ended_by, char** error) {
  CORRAL_PROCESS_OR_FAIL(process, error);
  Result<corral::executor::ProcessExit> exit = process->process->Wait();
  if (!exit.ok()) return Fail(exit.error(), error);
  if (exit->error) return Fail(*exit->error, error);
  if (exit_code != nullptr) *exit_code = exit->exit_code;
  if (signal != nullptr) *signal = exit->signal.value_or(0);
  if (ended_by != nullptr) *ended_by = static_cast<int>(exit->ended_by);
  if (process->protected_left_view.empty()) {
    process->protected_left = exit->protected_left;
    for (const std::string& path : process->protected_left) process->protected_left_view.push_back(path.c_str());
  }
  return Succeed(error);
}

const char* const* corral_process_protected_left(const corral_process* process, size_t* count) {
  if (count != nullptr) *count = process == nullptr ? 0 : process->protected_left_view.size();
  if (process == nullptr || process->protected_left_view.empty()) return nullptr;
  return process->protected_left_view.data();
}

void corral_process_free(corral_process* process) { delete process; }

}  // extern "C"
