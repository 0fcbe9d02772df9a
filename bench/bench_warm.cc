// The warm path against a bare spawn: side by side, interleaved in one run
// (A B C D A B C D ...), medians and ratios.
//
//   A  posix_spawn("/bin/true") + waitpid, from this process
//   B  a warm call of /bin/true: WarmSandbox::Run + Supervise + Reap
//   C  the same through RunConfined with RunOptions::warm (the whole run:
//      the plan compiled and compared, audit, supervision, sweep)
//   D  a cold RunConfined of /bin/true (a whole sandbox per run)
//
// The workspace is WORKSPACE (default: a fresh directory under /tmp).
// Every command's stdio goes to /dev/null.
//
//   bench_warm [runs] [workspace]
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "audit/audit.h"
#include "base/unique_fd.h"
#include "exec/supervisor.h"
#include "exec/warm_sandbox.h"
#include "gate/admit.h"
#include "policy/policy.h"
#include "policy/policy_file.h"
#include "run/run.h"

extern char** environ;

namespace {

using Clock = std::chrono::steady_clock;

class NobodyAnswers : public corral::Approver {
 public:
  corral::Result<corral::ApprovalAnswer> Request(const corral::ApprovalRequest&) override {
    return corral::Error(corral::ErrorKind::kDenied, "nobody answers");
  }
};

[[noreturn]] void Fail(const std::string& what) {
  std::fprintf(stderr, "bench_warm: %s\n", what.c_str());
  std::exit(2);
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int runs = argc > 1 ? std::atoi(argv[1]) : 300;
  std::string workspace = argc > 2 ? argv[2] : "";
  if (workspace.empty()) {
    char pattern[] = "/tmp/corral-bench-warm-XXXXXX";
    if (::mkdtemp(pattern) == nullptr) Fail("mkdtemp");
    workspace = pattern;
  }
  char state_pattern[] = "/tmp/corral-bench-state-XXXXXX";
  if (::mkdtemp(state_pattern) == nullptr) Fail("mkdtemp");
  corral::UniqueFd null(::open("/dev/null", O_RDWR | O_CLOEXEC));

  corral::Result<corral::HostContext> host = corral::CaptureHostContext();
  if (!host.ok()) Fail(host.error().ToString());
  corral::PolicyBuilder builder(*host);
  builder.Workspace(workspace);
  corral::Result<corral::Policy> policy = builder.Build();
  if (!policy.ok()) Fail(policy.error().ToString());
  corral::Result<std::unique_ptr<corral::WarmSandbox>> warm = corral::StartWarm(*policy);
  if (!warm.ok()) Fail(warm.error().ToString());
  sigset_t previous = corral::BlockForwardedSignals();

  auto bare = [&] {
    char* args[] = {const_cast<char*>("/bin/true"), nullptr};
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    for (int fd = 0; fd < 3; ++fd) posix_spawn_file_actions_adddup2(&actions, null.get(), fd);
    pid_t pid;
    if (posix_spawn(&pid, args[0], &actions, nullptr, args, environ) != 0) Fail("posix_spawn");
    int status = 0;
    ::waitpid(pid, &status, 0);
    posix_spawn_file_actions_destroy(&actions);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) Fail("/bin/true failed");
  };
  auto warm_call = [&] {
    corral::Command command;
    command.argv = {"/bin/true"};
    command.env = {"PATH=/usr/bin:/bin"};
    command.cwd = workspace;
    command.stdin_fd = command.stdout_fd = command.stderr_fd = null.get();
    corral::Result<corral::SandboxProcess> call = (*warm)->Run(command);
    if (!call.ok()) Fail(call.error().ToString());
    corral::SuperviseOptions options;
    options.forward_signals = false;
    corral::Result<corral::SupervisedExit> exit = corral::Supervise(*call, options);
    if (!exit.ok() || exit->code != 0) Fail("warm /bin/true failed");
    call->Reap();
  };
  auto run_confined = [&](corral::WarmSandbox* sandbox) {
    corral::gate::AdmitRequest request;
    request.argv = {"/bin/true"};
    corral::Result<corral::gate::PolicyFile> file =
        corral::gate::PolicyFile::Load(corral::SerializePolicyFile(*policy, request.argv), request.argv, policy->host());
    if (!file.ok()) Fail(file.error().ToString());
    request.policy = std::move(file).value();
    corral::AuditTrail trail = corral::AuditTrail::Discard();
    request.trail = &trail;
    NobodyAnswers nobody;
    corral::Result<corral::gate::AdmittedRun> admitted = corral::gate::Admit(std::move(request), nobody);
    if (!admitted.ok()) Fail(admitted.error().ToString());
    corral::RunOptions options;
    options.forward_signals = false;
    options.state_home = state_pattern;
    options.warm = sandbox;
    options.stdin_fd = options.stdout_fd = options.stderr_fd = null.get();
    corral::RunResult result = corral::RunConfined(std::move(admitted).value(), options);
    if (result.exit_status != 0) Fail("RunConfined: " + (result.error ? result.error->ToString() : "exit"));
  };

  struct Case {
    const char* name;
    std::function<void()> once;
    std::vector<double> ms;
  };
  std::vector<Case> cases = {
      {"posix_spawn /bin/true", bare, {}},
      {"warm call (WarmSandbox::Run)", warm_call, {}},
      {"warm RunConfined", [&] { run_confined(warm->get()); }, {}},
      {"cold RunConfined", [&] { run_confined(nullptr); }, {}},
  };
  for (Case& c : cases) c.once();  // warm-up
  for (int i = 0; i < runs; ++i) {
    for (Case& c : cases) {
      auto start = Clock::now();
      c.once();
      c.ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
    }
  }
  ::pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  const double base = Median(cases[0].ms);
  std::printf("%d runs each, interleaved, uid %d\n", runs, static_cast<int>(::getuid()));
  std::printf("| case | median ms | vs posix_spawn |\n|---|---|---|\n");
  for (const Case& c : cases) std::printf("| %s | %.3f | %.2fx |\n", c.name, Median(c.ms), Median(c.ms) / base);
  std::printf("warm call / cold RunConfined: %.3f\n", Median(cases[1].ms) / Median(cases[3].ms));
  return 0;
}
