#include "mcp/server.h"

#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <future>
#include <list>
#include <map>
#include <mutex>
#include <thread>

#include "base/mutant.h"
#include "base/terminal.h"
#include "gate/admit.h"
#include "gate/escalation.h"
#include "gate/tool_rules.h"
#include "mcp/json_rpc.h"
#include "run/warm_slot.h"
#include "tools/bash_tool.h"
#include "tools/catalog.h"
#include "tools/fence.h"
#include "tools/file_tools.h"

namespace corral::mcp {
namespace {

constexpr size_t kMessageCap = 32u << 20;
constexpr const char* kNewestVersion = "2025-06-18";
constexpr const char* kVersions[] = {"2025-06-18", "2025-03-26", "2024-11-05"};
constexpr int kDefaultBashTimeout = 120;
constexpr size_t kCallsInFlight = 16;
// The MCP log levels (RFC 5424's, lowest first); the client picks the least
// it wants with logging/setLevel, info until it does.
constexpr const char* kLogLevels[] = {"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"};
enum LogLevel : int { kLogInfo = 1, kLogNotice = 2, kLogWarning = 3 };

using tools::ToolResult;

// One tools/call in flight: what cancellation needs to reach it.
struct Call : RunWatcher {
  std::mutex mutex;
  std::condition_variable done_changed;
  int pidfd = -1;
  RunControl* control = nullptr;  // kills the command's tree, warm or cold
  bool cancelled = false;
  bool done = false;
  std::optional<nlohmann::json> progress_token;  // params._meta.progressToken
  std::optional<std::string> asking;  // the id of its open elicitation (guarded by the server's mutex)
  void Started(int fd) override {
    std::lock_guard lock(mutex);
    pidfd = fd;
    if (cancelled) Kill();
  }
  void Controls(RunControl* given) override {
    std::lock_guard lock(mutex);
    control = given;
  }
  void Ended() override {
    std::lock_guard lock(mutex);
    pidfd = -1;
    control = nullptr;
  }
  void Cancel() {
    std::lock_guard lock(mutex);
    cancelled = true;
    Kill();
  }
  // The command's whole tree: through the run's control (a warm call's
  // tree alone, its sandbox stays for the next call), or the sandbox's init,
  // with whose death the kernel kills the whole PID namespace.
  void Kill() {
    if (MutantActive(Mutant::kCancelKill)) return;
    if (control != nullptr) {
      (void)control->Kill();
    } else if (pidfd >= 0) {
      ::syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, nullptr, 0);
    }
  }
};

class Server;

// Asks the client through elicitation/create. Used for approvals and
// escalations; an Error means nobody could answer (the gate denies).
class ElicitingApprover : public Approver, public EscalationApprover {
 public:
  ElicitingApprover(Server& server, Call& call) : server_(server), call_(call) {}
  Result<ApprovalAnswer> Request(const ApprovalRequest& request) override;
  Result<EscalationAnswer> Request(const EscalationQuestion& question) override;

 private:
  Server& server_;
  Call& call_;
};

class Server {
 public:
  explicit Server(const ServerOptions& options) : options_(options) {}

  int Run() {
    LineReader reader(options_.in_fd, kMessageCap);
    while (std::optional<Line> line = reader.Next()) {
      if (line->oversized) {
        Write(ErrorLine(nullptr, kInvalidRequest, "the message is larger than 32 MiB"));
        continue;
      }
      ParsedMessage parsed = ParseMessage(line->text);
      if (const RpcError* error = std::get_if<RpcError>(&parsed)) {
        Write(ErrorLine(error->id, error->code, error->message));
        continue;
      }
      Dispatch(std::get<Message>(std::move(parsed)));
    }
    // The client is gone: cancel what runs, unblock what waits, and wait.
    {
      std::lock_guard lock(mutex_);
      closed_ = true;
      for (auto& [key, call] : calls_) call->Cancel();
      for (auto& [key, promise] : pending_) promise.set_value(std::nullopt);
      pending_.clear();
    }
    for (Worker& worker : workers_) worker.thread.join();
    warm_.Close("the server ended");
    return 0;
  }

  // Sends a request to the client for `call` and waits for its answer
  // (nullopt: the client answered with an error or went away, or the call
  // was cancelled meanwhile; a later answer to it is dropped).
  std::optional<nlohmann::json> AskClient(const std::string& method, const nlohmann::json& params, Call& call) {
    std::future<std::optional<nlohmann::json>> answer;
    std::string id;
    {
      std::lock_guard lock(mutex_);
      if (closed_) return std::nullopt;
      {
        std::lock_guard call_lock(call.mutex);
        if (call.cancelled) return std::nullopt;
      }
      id = "corral-" + std::to_string(++next_id_);
      answer = pending_[id].get_future();
      call.asking = id;
    }
    Write(RequestLine(id, method, params));
    std::optional<nlohmann::json> result = answer.get();
    std::lock_guard lock(mutex_);
    call.asking.reset();
    return result;
  }

  bool CanElicit() const { return can_elicit_.load(); }

 private:
  void Write(const std::string& line) {
    std::lock_guard lock(write_mutex_);
    size_t done = 0;
    while (done < line.size()) {
      ssize_t n = ::write(options_.out_fd, line.data() + done, line.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return;  // the client is gone; the reader sees the end soon
      done += static_cast<size_t>(n);
    }
  }

  void Dispatch(Message message) {
    if (message.kind == Message::Kind::kResponse) {
      std::lock_guard lock(mutex_);
      auto found = message.id.is_string() ? pending_.find(message.id.get<std::string>()) : pending_.end();
      if (found == pending_.end()) return;  // an answer to nothing asked: dropped
      found->second.set_value(message.error ? std::nullopt : message.result);
      pending_.erase(found);
      return;
    }
    if (message.kind == Message::Kind::kNotification) {
      if (message.method == "notifications/cancelled" && message.params.is_object()) {
        auto id = message.params.find("requestId");
        if (id == message.params.end()) return;
        std::lock_guard lock(mutex_);
        auto found = calls_.find(id->dump());
        if (found == calls_.end()) return;
        found->second->Cancel();
        // Its open question is answered "no" now; the client's answer, if it comes, is dropped.
        if (const std::optional<std::string>& asking = found->second->asking) {
          auto question = pending_.find(*asking);
          if (question != pending_.end()) {
            question->second.set_value(std::nullopt);
            pending_.erase(question);
          }
        }
      }
      return;  // notifications/initialized and others need no answer
    }
    const nlohmann::json& id = message.id;
    if (!message.params.is_object()) {
      Write(ErrorLine(id, kInvalidParams, "params must be an object"));
      return;
    }
    if (message.method == "initialize") return Initialize(id, message.params);
    if (message.method == "ping") return Write(ResultLine(id, nlohmann::json::object()));
    if (!initialized_) {
      Write(ErrorLine(id, kInvalidRequest, "the session is not initialized: send initialize first"));
      return;
    }
    if (message.method == "tools/list") return ListTools(id);
    if (message.method == "logging/setLevel") return SetLogLevel(id, message.params);
    if (message.method == "tools/call") return StartCall(id, message.params);
    Write(ErrorLine(id, kMethodNotFound, "unknown method: " + message.method));
  }

  void Initialize(const nlohmann::json& id, const nlohmann::json& params) {
    auto requested = params.find("protocolVersion");
    if (requested == params.end() || !requested->is_string()) {
      Write(ErrorLine(id, kInvalidParams, "initialize: protocolVersion (a string) is missing"));
      return;
    }
    std::string version = kNewestVersion;
    for (const char* known : kVersions) {
      if (*requested == known) version = known;
    }
    auto capabilities = params.find("capabilities");
    can_elicit_ = capabilities != params.end() && capabilities->is_object() &&
                  capabilities->contains("elicitation") && (*capabilities)["elicitation"].is_object() &&
                  version != "2024-11-05" && version != "2025-03-26";
    initialized_ = true;
    Write(ResultLine(id, {{"protocolVersion", version},
                          {"capabilities", {{"tools", {{"listChanged", false}}}, {"logging", nlohmann::json::object()}}},
                          {"serverInfo", {{"name", "corral"}, {"version", "0.1.0"}}},
                          {"instructions",
                           "corral's tools run inside a sandbox. A result whose text starts with \"[sandbox: ... "
                           "denied under <mode> mode]\" was refused by the sandbox, not a failure of the operation: "
                           "call sandbox_info to see what you may touch, or retry with sandbox_permissions and a "
                           "justification to ask the user for a wider mode for that one call."}}));
  }

  void SetLogLevel(const nlohmann::json& id, const nlohmann::json& params) {
    auto level = params.find("level");
    for (int index = 0; level != params.end() && level->is_string() && index < 8; ++index) {
      if (*level == kLogLevels[index]) {
        log_threshold_ = index;
        return Write(ResultLine(id, nlohmann::json::object()));
      }
    }
    Write(ErrorLine(id, kInvalidParams,
                    "logging/setLevel: level must be one of debug, info, notice, warning, error, critical, alert, "
                    "emergency"));
  }

  // A notifications/message, when the client asked for `level` or lower.
  // Never file contents or command output: what the audit record holds.
  void Log(int level, nlohmann::json data) {
    if (level < log_threshold_.load()) return;
    Write(NotificationLine("notifications/message",
                           {{"level", kLogLevels[level]}, {"logger", "corral"}, {"data", std::move(data)}}));
  }

  void ListTools(const nlohmann::json& id) {
    nlohmann::json list = nlohmann::json::array();
    for (const tools::ToolSpec& spec : tools::ToolCatalog()) {
      list.push_back({{"name", spec.name},
                      {"description", spec.description},
                      {"inputSchema", tools::InputSchema(spec)},
                      {"annotations", {{"readOnlyHint", spec.read_only}, {"openWorldHint", false}}}});
    }
    Write(ResultLine(id, {{"tools", list}}));
  }

  void StartCall(const nlohmann::json& id, const nlohmann::json& params) {
    auto name = params.find("name");
    if (name == params.end() || !name->is_string()) {
      Write(ErrorLine(id, kInvalidParams, "tools/call: name (a string) is missing"));
      return;
    }
    const tools::ToolSpec* spec = tools::FindTool(name->get<std::string>());
    if (spec == nullptr) {
      Write(ErrorLine(id, kInvalidParams, "unknown tool: " + name->get<std::string>()));
      return;
    }
    nlohmann::json arguments = params.value("arguments", nlohmann::json::object());
    if (Result<void> valid = tools::ValidateArguments(*spec, arguments); !valid.ok()) {
      Write(ErrorLine(id, kInvalidParams, valid.error().message()));
      return;
    }
    ReapWorkers();
    if (workers_.size() >= kCallsInFlight) {
      Write(ErrorLine(id, kInvalidRequest, "too many tool calls in flight (at most 16); wait for one to finish"));
      return;
    }
    auto call = std::make_shared<Call>();
    auto meta = params.find("_meta");
    if (meta != params.end() && meta->is_object() && meta->contains("progressToken")) {
      const nlohmann::json& token = (*meta)["progressToken"];
      if (token.is_string() || token.is_number_integer()) call->progress_token = token;
    }
    {
      std::lock_guard lock(mutex_);
      if (calls_.count(id.dump())) {
        Write(ErrorLine(id, kInvalidRequest, "a call with this id is already running"));
        return;
      }
      calls_[id.dump()] = call;
    }
    auto finished = std::make_shared<std::atomic<bool>>(false);
    Worker& worker = workers_.emplace_back();
    worker.finished = finished;
    worker.thread = std::thread([this, id, spec, arguments, call, finished] {
      ToolResult result = CallTool(*spec, arguments, *call);
      {
        std::lock_guard lock(mutex_);
        calls_.erase(id.dump());
      }
      if (result.outcome != tools::ToolOutcome::kOk) {
        Log(result.outcome == tools::ToolOutcome::kDenied ? kLogWarning : kLogNotice,
            {{"tool", spec->name}, {"outcome", tools::ToolOutcomeName(result.outcome)}, {"reason", result.reason}});
      }
      nlohmann::json structured = result.data;
      structured["outcome"] = tools::ToolOutcomeName(result.outcome);
      Write(ResultLine(id, {{"content", {{{"type", "text"}, {"text", result.text}}}},
                            {"structuredContent", structured},
                            {"isError", result.outcome != tools::ToolOutcome::kOk}}));
      *finished = true;
    });
  }

  // Joins the calls that have answered: a finished thread keeps its stack
  // until it is joined.
  void ReapWorkers() {
    for (auto it = workers_.begin(); it != workers_.end();) {
      if (!*it->finished) {
        ++it;
        continue;
      }
      it->thread.join();
      it = workers_.erase(it);
    }
  }

  // Asks "may this call run?" (kAsk); the answer covers this call only.
  Result<void> AskApproval(const tools::ToolSpec& spec, const nlohmann::json& arguments, Mode mode, Call& call,
                           std::string* basis) {
    if (!CanElicit()) {
      *basis = "no-elicitation";
      if (MutantActive(Mutant::kToolAskFallback)) return {};
      return Error(ErrorKind::kDenied, "the " + spec.name +
                                           " tool needs the user's approval, and this MCP client did not declare "
                                           "the elicitation capability, so corral cannot ask; nothing ran");
    }
    ElicitingApprover approver(*this, call);
    ApprovalRequest request;
    request.summary = Summary(spec, arguments);
    request.rationale = "the " + spec.name + " tool needs approval";
    request.class_key = "tool:" + spec.name;
    request.context.mode = std::string(ModeName(mode));
    Result<ApprovalAnswer> answer = approver.Request(request);
    if (answer.ok() && *answer == ApprovalAnswer::kAllowOnce) {
      *basis = "answered-once";
      return {};
    }
    *basis = answer.ok() ? "answered-deny" : "approver-failed";
    if (!answer.ok()) return Error(ErrorKind::kDenied, answer.error().message() + "; nothing ran");
    return Error(ErrorKind::kDenied, "the user declined this " + spec.name + " call; nothing ran");
  }

  // What the user is asked about: each argument with its controls escaped
  // (a carriage return or an erase-line escape cannot hide what follows),
  // whole up to 4096 bytes; a longer one is cut and the question says so in
  // capitals, with its length, so padding cannot push the tail out of view.
  static std::string Summary(const tools::ToolSpec& spec, const nlohmann::json& arguments) {
    constexpr size_t kShown = 4096;
    std::string text = spec.name;
    for (const char* key : {"path", "command", "pattern"}) {
      auto found = arguments.find(key);
      if (found == arguments.end() || !found->is_string()) continue;
      const std::string& value = found->get_ref<const std::string&>();
      std::string shown = EscapeControls(value.size() > kShown ? std::string_view(value).substr(0, kShown) : value);
      text += std::string(" ") + key + "=" + shown;
      if (value.size() > kShown) {
        text += " [... THE REST IS NOT SHOWN: this " + std::string(key) + " is " + std::to_string(value.size()) +
                " bytes long; decline unless you know what it holds]";
      }
    }
    return text;
  }

  ToolResult CallTool(const tools::ToolSpec& spec, const nlohmann::json& arguments, Call& call) {
    AuditEvent event("tool");
    event.Set("tool", spec.name);
    ToolResult result = CallToolRecorded(spec, arguments, call, event);
    event.Set("outcome", tools::ToolOutcomeName(result.outcome));
    if (!result.reason.empty()) event.Set("reason", result.reason.substr(0, 512));
    if (options_.trail != nullptr) options_.trail->Record(event);
    return result;
  }

  ToolResult CallToolRecorded(const tools::ToolSpec& spec, const nlohmann::json& arguments, Call& call,
                              AuditEvent& event) {
    RunRequest request = options_.request;
    {
      std::lock_guard lock(mutex_);
      if (session_mode_) request.overrides.mode = *session_mode_;  // only under the mcp_escalation_once mutant
    }
    Result<ResolvedRequest> resolved = ResolveRequest(request, options_.host);
    if (!resolved.ok()) return tools::Failure("the policy could not be resolved: " + resolved.error().ToString());
    Mode mode = resolved->spec.mode;
    Result<Policy> policy = BuildPolicy(options_.host, resolved->spec);
    if (!policy.ok()) return tools::Failure("the policy could not be built: " + policy.error().ToString());
    event.Set("policy", policy->fingerprint());
    // 3. the tool rule
    Decision rule = gate::ToolRule(gate::ToolApprovalPolicy(*resolved), spec.name);
    event.Set("rule", DecisionName(rule));
    if (rule == Decision::kDeny) {
      event.Set("decision", "deny");
      return tools::Denial(mode, "the approval policy " + std::string(ApprovalPolicyName(gate::ToolApprovalPolicy(*resolved))) +
                                     " refuses the " + spec.name + " tool");
    }
    bool escalating = arguments.contains("sandbox_permissions") || arguments.contains("justification");
    if (rule == Decision::kAsk && !escalating && (spec.name == "write" || spec.name == "edit")) {
      // The fence would refuse: nobody is asked about a call that cannot run.
      Result<tools::Fence> fence = tools::Fence::Open(*policy);
      Result<tools::FencedName> target =
          fence.ok() ? fence->OpenForWrite(arguments.value("path", std::string())) : Result<tools::FencedName>(fence.error());
      if (!target.ok() && target.error().kind() == ErrorKind::kDenied) {
        event.Set("decision", "deny").Set("basis", "fence");
        return tools::Denial(mode, target.error().ToString());
      }
    }
    if (rule == Decision::kAsk) {
      std::string basis;
      Result<void> asked = AskApproval(spec, arguments, mode, call, &basis);
      event.Set("basis", basis);
      if (!asked.ok()) {
        event.Set("decision", "deny");
        return tools::Denial(mode, asked.error().message());
      }
    }
    event.Set("decision", "allow");
    // 4. an escalation, for this one call
    if (escalating) {
      ElicitingApprover approver(*this, call);
      EscalationRequest escalation;
      escalation.current = mode;
      if (arguments.contains("sandbox_permissions")) escalation.sandbox_permissions = arguments["sandbox_permissions"];
      if (arguments.contains("justification")) escalation.justification = arguments["justification"];
      escalation.action = Summary(spec, arguments);
      escalation.ceiling = resolved->mode_ceiling;
      Result<EscalationGrant> grant = ApproveEscalation(escalation, CanElicit() ? &approver : nullptr);
      AuditEvent record("escalation");
      record.Set("tool", spec.name).Set("from", ModeName(mode));
      if (escalation.sandbox_permissions) record.Set("to", *escalation.sandbox_permissions);
      if (escalation.justification) record.Set("justification", escalation.justification->substr(0, 512));
      if (!grant.ok()) {
        record.Set("outcome", "refused").Set("reason", grant.error().message());
        if (options_.trail != nullptr) options_.trail->Record(record);
        event.Set("decision", "deny");
        std::string why = grant.error().message();
        if (!CanElicit()) why += " (this MCP client did not declare the elicitation capability, so corral cannot ask)";
        return tools::Denial(mode, why);
      }
      record.Set("outcome", EscalationOutcomeName(grant->outcome));
      if (options_.trail != nullptr) options_.trail->Record(record);
      if (grant->outcome == EscalationOutcome::kAllowedOnce) {
        request.overrides.mode = grant->mode;
        if (grant->mode == Mode::kDangerFullAccess) request.overrides.acknowledge_danger = true;
        if (MutantActive(Mutant::kMcpEscalationOnce)) {
          std::lock_guard lock(mutex_);
          session_mode_ = grant->mode;
        }
        resolved = ResolveRequest(request, options_.host);
        if (!resolved.ok()) return tools::Failure("the policy could not be resolved: " + resolved.error().ToString());
        mode = resolved->spec.mode;
        event.Set("escalated", ModeName(mode));
        policy = BuildPolicy(options_.host, resolved->spec);
        if (!policy.ok()) return tools::Failure("the policy could not be built: " + policy.error().ToString());
        event.Set("policy", policy->fingerprint());
      }
    }
    if (spec.name == "bash") return CallBash(arguments, request, call, event);
    if (spec.name == "sandbox_info") {
      ApprovalPolicy approvals = gate::ToolApprovalPolicy(*resolved);
      nlohmann::json rules = nlohmann::json::object();
      for (const tools::ToolSpec& tool : tools::ToolCatalog()) {
        rules[tool.name] = DecisionName(gate::ToolRule(approvals, tool.name));
      }
      rules["elicitation"] = CanElicit();
      return tools::SandboxInfoTool(*policy, rules);
    }
    Result<tools::Fence> fence = tools::Fence::Open(*policy);
    if (!fence.ok()) return tools::Failure(fence.error().ToString());
    if (spec.name == "read") return tools::ReadTool(*fence, arguments);
    if (spec.name == "write") return tools::WriteTool(*fence, arguments);
    if (spec.name == "edit") return tools::EditTool(*fence, arguments);
    if (spec.name == "ls") return tools::LsTool(*fence, arguments);
    if (spec.name == "find") return tools::FindTool(*fence, arguments);
    if (spec.name == "grep") return tools::GrepTool(*fence, arguments);
    return tools::Failure("unknown tool: " + spec.name);
  }

  ToolResult CallBash(const nlohmann::json& arguments, RunRequest request, Call& call, AuditEvent& event) {
    int64_t timeout = arguments.value("timeout", static_cast<int64_t>(kDefaultBashTimeout));
    auto& configured = request.overrides.timeout;
    if (!configured || configured->count() > timeout) configured = std::chrono::seconds(timeout);
    // The tool rule above was the approval: the gate does not ask again.
    request.approval = ApprovalPolicy::kAllowAll;
    Result<ResolvedRequest> resolved = ResolveRequest(request, options_.host);
    if (!resolved.ok()) return tools::Failure("the policy could not be resolved: " + resolved.error().ToString());
    Mode mode = resolved->spec.mode;
    ElicitingApprover approver(*this, call);
    gate::AdmitRequest admit;
    admit.argv = {"bash", "-c", arguments.value("command", std::string())};
    admit.policy = std::move(resolved).value();
    admit.host = options_.host;
    admit.trail = options_.trail;
    Result<gate::AdmittedRun> admitted = gate::Admit(std::move(admit), approver);
    if (!admitted.ok()) return tools::FromError(mode, admitted.error());
    event.Set("policy", admitted->policy().fingerprint());
    tools::BashOptions bash;
    bash.watcher = &call;
    bash.warm = &warm_;
    bash.state_home = options_.state_home;
    bash.cancelled = [&call] {
      std::lock_guard lock(call.mutex);
      return call.cancelled ? tools::Cancelled::kYes : tools::Cancelled::kNo;
    };
    // A client that gave a progress token hears every 5 seconds that the command still runs.
    std::thread progress;
    if (call.progress_token) {
      progress = std::thread([this, &call] {
        std::unique_lock lock(call.mutex);
        for (int seconds = 5;; seconds += 5) {
          if (call.done_changed.wait_for(lock, std::chrono::seconds(5), [&call] { return call.done; })) return;
          Write(NotificationLine("notifications/progress",
                                 {{"progressToken", *call.progress_token},
                                  {"progress", seconds},
                                  {"message", "bash has run for " + std::to_string(seconds) + "s"}}));
        }
      });
    }
    ToolResult result = tools::BashTool(std::move(admitted).value(), bash);
    if (progress.joinable()) {
      {
        std::lock_guard lock(call.mutex);
        call.done = true;
      }
      call.done_changed.notify_all();
      progress.join();
    }
    return result;
  }

  const ServerOptions& options_;
  // The bash calls run in one warm sandbox of the server's, started at the
  // first call under that call's policy; a call it refuses (another call
  // holds it, a policy it was not started for, a lost init) runs cold.
  WarmSlot warm_;
  std::mutex write_mutex_;
  std::mutex mutex_;  // guards what follows
  bool closed_ = false;
  uint64_t next_id_ = 0;
  std::map<std::string, std::promise<std::optional<nlohmann::json>>> pending_;
  std::map<std::string, std::shared_ptr<Call>> calls_;
  std::optional<Mode> session_mode_;
  // Touched by the reader thread only.
  struct Worker {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> finished;
  };
  std::list<Worker> workers_;
  bool initialized_ = false;
  std::atomic<bool> can_elicit_ = false;
  std::atomic<int> log_threshold_ = kLogInfo;
};

// accept allows this call once when its content is absent (the schema's
// default), has no approve, or has approve true; decline, cancel, and an
// accept whose content is not that schema's (approve a string, content not
// an object) deny: an answer corral cannot read approves nothing.
std::optional<bool> Elicit(Server& server, Call& call, const std::string& message) {
  nlohmann::json params = {
      {"message", message},
      {"requestedSchema",
       {{"type", "object"},
        {"properties",
         {{"approve", {{"type", "boolean"}, {"title", "Allow this one call"}, {"default", true}}}}}}}};
  std::optional<nlohmann::json> answer = server.AskClient("elicitation/create", params, call);
  if (!answer || !answer->is_object()) return std::nullopt;
  std::string action = answer->value("action", std::string());
  if (action != "accept") return false;
  auto content = answer->find("content");
  if (content == answer->end()) return true;
  if (!content->is_object()) return false;
  auto approve = content->find("approve");
  return approve == content->end() || (approve->is_boolean() && approve->get<bool>());
}

Result<ApprovalAnswer> ElicitingApprover::Request(const ApprovalRequest& request) {
  std::optional<bool> allowed =
      Elicit(server_, call_, "corral: the agent asks to run " + request.summary + " (" + request.rationale +
                          ", sandbox mode " + request.context.mode + "). Allow this one call?");
  if (!allowed) {
    return Error(ErrorKind::kDenied, "the client did not answer the approval request, or the call was cancelled");
  }
  return *allowed ? ApprovalAnswer::kAllowOnce : ApprovalAnswer::kDeny;
}

Result<EscalationAnswer> ElicitingApprover::Request(const EscalationQuestion& question) {
  std::optional<bool> allowed =
      Elicit(server_, call_, "corral: the agent asks to run " + question.action + " under " +
                          std::string(ModeName(question.target)) + " mode instead of " +
                          std::string(ModeName(question.current)) + ", for this one call. Its reason: " +
                          EscapeControls(question.justification) + ". Allow?");
  if (!allowed) return Error(ErrorKind::kDenied, "the client did not answer the escalation request");
  return *allowed ? EscalationAnswer::kApprove : EscalationAnswer::kReject;
}

}  // namespace

int Serve(const ServerOptions& options) {
  // A client that goes away mid-write must not kill the server with SIGPIPE.
  ::signal(SIGPIPE, SIG_IGN);
  Server server(options);
  return server.Run();
}

}  // namespace corral::mcp
