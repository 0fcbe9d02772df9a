// The executor library (executor/executor.h, executor/process.h), driven
// in-process as a harness drives it, and judged from outside: /proc for the
// processes a call left, the scratch directory's listing, canaries a refused
// call would have made.
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "executor/executor.h"
#include "executor/process.h"
#include "repair/sweep_journal.h"
#include "state/state_dir.h"
#include "harness.h"

// Designated initializers name only the options a test sets.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace corral_it {
namespace {

using corral::executor::Executor;
using corral::executor::ExecutorErrc;
using corral::executor::ExecutorErrcOf;
using corral::executor::ExecutorPolicy;
using corral::executor::ExecutorSet;
using corral::executor::ExecutorSetOptions;
using corral::executor::Process;
using corral::executor::ProcessOptions;
using corral::executor::ProcessSignal;
using corral::executor::RunOutput;
using corral::executor::Tty;

#define EXPECT_ERRC(result, errc)                                                           \
  do {                                                                                      \
    const auto& r_ = (result);                                                              \
    ASSERT_FALSE(r_.ok()) << "expected " << corral::executor::ExecutorErrcName(errc);       \
    EXPECT_EQ(ExecutorErrcOf(r_.error()), errc) << r_.error().ToString();                   \
  } while (0)

class AnswersYes : public corral::Approver {
 public:
  corral::Result<corral::ApprovalAnswer> Request(const corral::ApprovalRequest&) override {
    ++asked;
    return corral::ApprovalAnswer::kAllowOnce;
  }
  std::atomic<int> asked = 0;
};

// The processes whose parent is this one (zombies too: nothing may be left
// for anyone to reap).
int Children() {
  int count = 0;
  DIR* proc = ::opendir("/proc");
  while (const struct dirent* entry = proc != nullptr ? ::readdir(proc) : nullptr) {
    if (entry->d_name[0] < '0' || entry->d_name[0] > '9') continue;
    std::ifstream stat(std::string("/proc/") + entry->d_name + "/stat");
    std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    size_t close = text.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream fields(text.substr(close + 2));
    std::string state;
    pid_t ppid = 0;
    fields >> state >> ppid;
    count += ppid == ::getpid();
  }
  if (proc != nullptr) ::closedir(proc);
  return count;
}

size_t Entries(const std::string& dir) {
  size_t count = 0;
  for (auto it = std::filesystem::directory_iterator(dir); it != std::filesystem::directory_iterator(); ++it) ++count;
  return count;
}

size_t Lines(const std::string& path) {
  std::ifstream in(path);
  size_t count = 0;
  for (std::string line; std::getline(in, line);) ++count;
  return count;
}

// Reads what `fd` shows until `expect` appears or `limit` passes.
bool ReadUntil(int fd, std::string& seen, const std::string& expect, std::chrono::milliseconds limit = 15s) {
  auto end = std::chrono::steady_clock::now() + limit;
  while (seen.find(expect) == std::string::npos) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    struct pollfd p = {fd, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    char buffer[4096];
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n <= 0) return seen.find(expect) != std::string::npos;
    seen.append(buffer, static_cast<size_t>(n));
  }
  return true;
}

void WriteAll(int fd, const std::string& text) {
  ASSERT_EQ(::write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
}

class Executors : public ::testing::Test {
 public:
  ExecutorPolicy Policy() const {
    corral::Result<corral::HostContext> host = corral::CaptureHostContext();
    EXPECT_TRUE(host.ok());
    ExecutorPolicy policy;
    policy.host = *host;
    policy.host.cwd = workspace_.path();
    policy.request.no_config = true;
    policy.request.overrides.workspace = workspace_.path();
    return policy;
  }
  ExecutorSetOptions Options() const {
    ExecutorSetOptions options;
    options.scratch_root = scratch_.path();
    options.state_home = state_.path();
    return options;
  }
  std::unique_ptr<ExecutorSet> MakeSet(ExecutorPolicy policy, ExecutorSetOptions options) {
    corral::Result<std::unique_ptr<ExecutorSet>> set = ExecutorSet::Create(std::move(policy), std::move(options));
    EXPECT_TRUE(set.ok()) << set.error().ToString();
    return set.ok() ? std::move(set).value() : nullptr;
  }
  std::unique_ptr<ExecutorSet> MakeSet() { return MakeSet(Policy(), Options()); }
  // A set whose policy is `toml` (the config file's schema).
  std::unique_ptr<ExecutorSet> MakeSetWithConfig(const std::string& toml) {
    ExecutorPolicy policy = Policy();
    policy.config_toml = toml;
    return MakeSet(std::move(policy), Options());
  }

  TempDir workspace_{"corral-ws"};
  TempDir outside_{"corral-outside"};
  TempDir state_{"corral-state"};
  TempDir scratch_{"corral-scratch"};
};

TEST_F(Executors, RunCapturesOutputAndExitInTheExecutorsHomeAndTmpdir) {
  auto set = MakeSet();
  ASSERT_TRUE(set);
  corral::Result<Executor*> one = set->For("one");
  ASSERT_TRUE(one.ok()) << one.error().ToString();
  EXPECT_EQ(set->For("one").value(), *one);  // memoised
  EXPECT_EQ((*one)->level(), corral::Level::kFull);
  EXPECT_NE((*one)->Report().find("\"plan\""), std::string::npos);

  corral::Result<RunOutput> out = (*one)->RunCommand(workspace_.path(), "echo out; echo err >&2; exit 3");
  ASSERT_TRUE(out.ok()) << out.error().ToString();
  EXPECT_EQ(out->stdout_bytes, "out\n");
  EXPECT_EQ(out->stderr_bytes, "err\n");
  EXPECT_EQ(out->exit_code, 3);

  // HOME and TMPDIR are the executor's own, under the scratch, and last
  // between its calls; another executor has others.
  out = (*one)->RunCommand("", "printf '%s %s' \"$HOME\" \"$TMPDIR\"; echo kept > \"$HOME/note\"");
  ASSERT_TRUE(out.ok()) << out.error().ToString();
  EXPECT_EQ(out->stdout_bytes, (*one)->home() + " " + (*one)->tmpdir());
  EXPECT_TRUE((*one)->home().starts_with(set->scratch_path() + "/"));
  EXPECT_EQ(ReadFile((*one)->home() + "/note"), "kept\n");  // seen from outside
  out = (*one)->RunCommand("", "cat \"$HOME/note\"");
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->stdout_bytes, "kept\n");
  corral::Result<Executor*> two = set->For("two");
  ASSERT_TRUE(two.ok());
  EXPECT_NE((*two)->home(), (*one)->home());
  out = (*two)->RunCommand("", "cat \"$HOME/note\" || echo absent; cat " + (*one)->home() + "/note || echo hidden");
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->stdout_bytes, "absent\nhidden\n");
  set->Close();
  EXPECT_FALSE(Exists(set->scratch_path()));
}

// The calls of one executor share its $HOME and $TMPDIR, dotfiles too: a
// `git config --global` or a ~/.bashrc one call writes is there for the
// next, since nothing outside the sandbox runs from them (no protected
// path is swept there). The workspace's still are, and forbid_read hides
// in the scratch as in any grant. Judged from outside where it can be.
TEST_F(Executors, DotfilesOneCallWritesInItsHomeStayForTheNext) {
  auto set = MakeSetWithConfig("[sandbox]\nforbid_read = [\"**/.env\"]\n");
  ASSERT_TRUE(set);
  Executor* one = set->For("one").value();
  auto first = one->RunCommand("", "git config --global user.name Ana && echo 'alias ll=ls' > ~/.bashrc && "
                                   "mkdir -p \"$TMPDIR/repo/.git/hooks\" && printf SECRET-c41e > ~/.env && "
                                   "echo 'export PLANTED=1' > .envrc && echo wrote");
  ASSERT_TRUE(first.ok()) << first.error().ToString();
  EXPECT_EQ(first->stdout_bytes, "wrote\n") << first->stderr_bytes;
  EXPECT_EQ(ReadFile(one->home() + "/.bashrc"), "alias ll=ls\n");
  EXPECT_NE(ReadFile(one->home() + "/.gitconfig").value_or("").find("name = Ana"), std::string::npos);
  EXPECT_TRUE(Exists(one->tmpdir() + "/repo/.git/hooks"));
  EXPECT_FALSE(Exists(workspace_ / ".envrc")) << "the workspace is still swept";

  auto next = one->RunCommand("", "git config --global user.name; cat ~/.bashrc; cat ~/.env; echo done");
  ASSERT_TRUE(next.ok()) << next.error().ToString();
  EXPECT_EQ(next->stdout_bytes.substr(0, 16), "Ana\nalias ll=ls\n") << next->stdout_bytes;
  EXPECT_EQ(next->stdout_bytes.find("SECRET-c41e"), std::string::npos) << "forbid_read hides in the scratch";
  EXPECT_NE(next->stdout_bytes.find("done"), std::string::npos);
  set->Close();
}

// A scratch root inside a grant (the workspace, a read grant) would show
// one executor's $HOME to every other executor of the set, which has the
// same grants: a ~/.bashrc one plants would run in the other's calls. Such
// an executor is refused (typed, before any call), and nothing runs.
TEST_F(Executors, AScratchRootInsideAGrantIsRefused) {
  workspace_.Mkdir(".scratch");
  outside_.Mkdir("shown");
  ExecutorPolicy policy = Policy();
  policy.config_toml = "[sandbox]\nallow_read = [\"" + (outside_ / "shown") + "\"]\n";
  for (const std::string& root : {workspace_ / ".scratch", outside_ / "shown"}) {
    ExecutorSetOptions options = Options();
    options.scratch_root = root;
    auto set = MakeSet(policy, options);
    ASSERT_TRUE(set);
    corral::Result<Executor*> refused = set->For("a");
    EXPECT_ERRC(refused, ExecutorErrc::kPolicy);
    EXPECT_NE(refused.error().ToString().find("put the scratch root outside every grant"), std::string::npos)
        << refused.error().ToString();
    set->Close();
  }
}

TEST_F(Executors, LifecycleStartOnceWaitOnceAndEveryUseAfterCloseIsTyped) {
  auto set = MakeSet();
  ASSERT_TRUE(set);
  Executor* executor = set->For("life").value();
  auto prepared = executor->PrepareProcess(ProcessOptions{.dir = "", .argv = {"/bin/sh", "-c", "exit 5"}});
  ASSERT_TRUE(prepared.ok()) << prepared.error().ToString();
  Process& process = **prepared;
  EXPECT_ERRC(process.Wait(), ExecutorErrc::kNotStarted);
  EXPECT_ERRC(process.Signal(ProcessSignal::kTerminate), ExecutorErrc::kNotStarted);
  ASSERT_TRUE(process.Start().ok());
  EXPECT_ERRC(process.Start(), ExecutorErrc::kAlreadyStarted);
  auto first = process.Wait();
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->exit_code, 5);
  auto second = process.Wait();
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->exit_code, 5);
  ASSERT_TRUE(process.CloseStdin().ok());
  EXPECT_ERRC(process.CloseStdin(), ExecutorErrc::kStdinClosed);
  EXPECT_ERRC(process.Stdin(), ExecutorErrc::kStdinClosed);
  process.Close();
  process.Close();  // idempotent

  auto later = executor->PrepareProcess(ProcessOptions{.dir = "", .argv = {"/bin/true"}});
  ASSERT_TRUE(later.ok());
  set->Close();
  set->Close();  // idempotent
  EXPECT_TRUE(set->closed());
  EXPECT_ERRC(set->For("life"), ExecutorErrc::kSetClosed);
  EXPECT_ERRC(set->For("new"), ExecutorErrc::kSetClosed);
  EXPECT_ERRC(executor->RunArgv("", {"/bin/true"}), ExecutorErrc::kSetClosed);
  EXPECT_ERRC(executor->RunCommand("", "true"), ExecutorErrc::kSetClosed);
  EXPECT_ERRC(executor->RunArgvLimited("", {"/bin/true"}, 10), ExecutorErrc::kSetClosed);
  EXPECT_ERRC(executor->PrepareProcess(ProcessOptions{.dir = "", .argv = {"/bin/true"}}), ExecutorErrc::kSetClosed);
  EXPECT_ERRC((*later)->Start(), ExecutorErrc::kSetClosed);
  EXPECT_FALSE(Exists(set->scratch_path()));
}

TEST_F(Executors, ClosingOneExecutorLeavesTheOthers) {
  auto set = MakeSet();
  ASSERT_TRUE(set);
  Executor* a = set->For("a").value();
  Executor* b = set->For("b").value();
  std::string a_home = a->home();
  a->Close();
  a->Close();
  EXPECT_ERRC(a->RunArgv("", {"/bin/true"}), ExecutorErrc::kExecutorClosed);
  EXPECT_FALSE(Exists(a_home));
  auto out = b->RunArgv("", {"/bin/true"});
  ASSERT_TRUE(out.ok()) << out.error().ToString();
  // The key gets a new executor.
  Executor* again = set->For("a").value();
  EXPECT_NE(again, a);
  EXPECT_TRUE(again->RunArgv("", {"/bin/true"}).ok());
}

TEST_F(Executors, CancellationKillsTheWholeTreeIncludingADaemonisedGrandchild) {
  auto set = MakeSet();
  ASSERT_TRUE(set);
  Executor* executor = set->For("cancel").value();
  std::string daemon = RandomToken("daemon");
  std::string worker = RandomToken("worker");
  std::optional<corral::Result<RunOutput>> result;
  std::thread call([&] {
    result.emplace(executor->RunCommand(
        "", "(setsid sh -c 'sleep 1000; : " + daemon + "' &) ; sh -c 'sleep 1000; : " + worker + "'"));
  });
  // Both run, as seen from outside.
  EXPECT_TRUE(WaitFor([&] { return !ProcessesMatching(daemon).empty() && !ProcessesMatching(worker).empty(); }, 20s));
  set->Close();
  std::vector<pid_t> left = ProcessesMatching(daemon), left_worker = ProcessesMatching(worker);
  EXPECT_TRUE(left.empty());
  EXPECT_TRUE(left_worker.empty());
  // Under a mutant that leaves them running, end them here so the call returns.
  left.insert(left.end(), left_worker.begin(), left_worker.end());
  for (pid_t pid : left) ::kill(pid, SIGKILL);
  call.join();
  ASSERT_TRUE(result.has_value());
  EXPECT_ERRC(*result, ExecutorErrc::kCancelled);
  EXPECT_EQ(Children(), 0);
}

TEST_F(Executors, APreparedProcessIsKilledWithItsTreeWhenTheSetCloses) {
  auto set = MakeSet();
  ASSERT_TRUE(set);
  std::string daemon = RandomToken("daemon");
  auto process = set->For("p").value()->PrepareProcess(
      ProcessOptions{.dir = "", .argv = {"/bin/sh", "-c", "(setsid sh -c 'sleep 1000; : " + daemon + "' &); sleep 1000"}});
  ASSERT_TRUE(process.ok());
  ASSERT_TRUE((*process)->Start().ok());
  EXPECT_TRUE(WaitFor([&] { return !ProcessesMatching(daemon).empty(); }, 20s));
  set->Close();
  std::vector<pid_t> left = ProcessesMatching(daemon);
  EXPECT_TRUE(left.empty());
  if (!left.empty()) {
    // Under a mutant that leaves the tree running: end it so Wait returns.
    for (pid_t pid : left) ::kill(pid, SIGKILL);
    (void)(*process)->Signal(ProcessSignal::kKill);
  }
  auto exit = (*process)->Wait();
  ASSERT_TRUE(exit.ok());
  EXPECT_EQ(exit->ended_by, corral::executor::EndedBy::kCancelled);
}

TEST_F(Executors, PtyDrivesAShellReadingLinesAndAResizeIsSeen) {
  auto set = MakeSet();
  ASSERT_TRUE(set);
  auto process = set->For("tty").value()->PrepareProcess(
      ProcessOptions{.dir = "", .argv = {"/bin/sh"}, .env = {{"PS1", "$ "}}, .tty = Tty::kYes, .rows = 24, .columns = 80});
  ASSERT_TRUE(process.ok());
  ASSERT_TRUE((*process)->Start().ok());
  EXPECT_ERRC((*process)->Stdin(), ExecutorErrc::kStdinClosed);
  int master = (*process)->Pty().value();
  std::string seen;
  WriteAll(master, "stty size; tty\n");
  EXPECT_TRUE(ReadUntil(master, seen, "24 80")) << seen;
  EXPECT_TRUE(ReadUntil(master, seen, "/dev/pts/")) << seen;
  ASSERT_TRUE((*process)->Resize(40, 120).ok());
  seen.clear();
  WriteAll(master, "stty size\n");
  EXPECT_TRUE(ReadUntil(master, seen, "40 120")) << seen;
  seen.clear();
  WriteAll(master, "read line; echo \"got-$line\" | tr a-z A-Z\n");
  WriteAll(master, "hello\n");
  EXPECT_TRUE(ReadUntil(master, seen, "GOT-HELLO")) << seen;
  WriteAll(master, "exit 7\n");
  auto exit = (*process)->Wait();
  ASSERT_TRUE(exit.ok());
  EXPECT_EQ(exit->exit_code, 7);
  EXPECT_EQ(exit->ended_by, corral::executor::EndedBy::kCommand);
}

TEST_F(Executors, PipesCarryStdinToStdout) {
  auto set = MakeSet();
  ASSERT_TRUE(set);
  auto process = set->For("pipes").value()->PrepareProcess(
      ProcessOptions{.dir = "", .argv = {"/bin/sh", "-c", "tr a-z A-Z; echo \"$EXTRA\" >&2"}, .env = {{"EXTRA", "added"}}});
  ASSERT_TRUE(process.ok());
  ASSERT_TRUE((*process)->Start().ok());
  WriteAll((*process)->Stdin().value(), "quiet words\n");
  ASSERT_TRUE((*process)->CloseStdin().ok());
  std::string out, err;
  EXPECT_TRUE(ReadUntil((*process)->Stdout().value(), out, "QUIET WORDS\n"));
  EXPECT_TRUE(ReadUntil((*process)->Stderr().value(), err, "added\n"));
  EXPECT_EQ((*process)->Wait()->exit_code, 0);
}

TEST_F(Executors, ADeadlineTerminatesAndEscalatesToKillAfterTheGrace) {
  auto set = MakeSet();
  ASSERT_TRUE(set);
  Executor* executor = set->For("deadline").value();
  // A child that handles TERM ends on it: the terminate came first.
  auto polite = executor->PrepareProcess(ProcessOptions{
      .dir = "", .argv = {"/bin/sh", "-c", "trap 'exit 42' TERM; sleep 1000 & wait"}, .deadline = 500ms,
      .terminate_grace = 30s});
  ASSERT_TRUE(polite.ok());
  ASSERT_TRUE((*polite)->Start().ok());
  auto exit = (*polite)->Wait();
  ASSERT_TRUE(exit.ok());
  EXPECT_EQ(exit->exit_code, 42);
  EXPECT_EQ(exit->ended_by, corral::executor::EndedBy::kDeadline);

  // One that ignores TERM is killed, with its whole tree, after the grace.
  std::string token = RandomToken("deaf");
  auto deaf = executor->PrepareProcess(ProcessOptions{
      .dir = "", .argv = {"/bin/sh", "-c", "trap '' TERM; sh -c 'sleep 1000; : " + token + "'"}, .deadline = 500ms,
      .terminate_grace = 500ms});
  ASSERT_TRUE(deaf.ok());
  ASSERT_TRUE((*deaf)->Start().ok());
  EXPECT_TRUE(WaitFor([&] { return !ProcessesMatching(token).empty(); }, 20s));
  exit = (*deaf)->Wait();
  ASSERT_TRUE(exit.ok());
  EXPECT_EQ(exit->signal, SIGKILL);
  EXPECT_EQ(exit->ended_by, corral::executor::EndedBy::kDeadline);
  EXPECT_TRUE(ProcessesMatching(token).empty());

  // Signal(kTerminate) escalates the same way (once the trap is set: a
  // warm call is signalled as soon as it exists).
  auto signalled = executor->PrepareProcess(ProcessOptions{
      .dir = "", .argv = {"/bin/sh", "-c", "trap '' TERM; echo ready; sleep 1000; :"}, .terminate_grace = 300ms});
  ASSERT_TRUE(signalled.ok());
  ASSERT_TRUE((*signalled)->Start().ok());
  std::string seen;
  ASSERT_TRUE(ReadUntil((*signalled)->Stdout().value(), seen, "ready"));
  ASSERT_TRUE((*signalled)->Signal(ProcessSignal::kTerminate).ok());
  exit = (*signalled)->Wait();
  ASSERT_TRUE(exit.ok());
  EXPECT_EQ(exit->signal, SIGKILL);
  EXPECT_EQ(exit->ended_by, corral::executor::EndedBy::kSignal);
}

TEST_F(Executors, OutputPastTheCapKillsTheTree) {
  auto set = MakeSet();
  ASSERT_TRUE(set);
  auto out = set->For("cap").value()->RunArgvLimited("", {"yes"}, 4096);
  ASSERT_TRUE(out.ok()) << out.error().ToString();
  EXPECT_TRUE(out->output_limit);
  EXPECT_EQ(out->stdout_bytes.size(), 4096u);
  auto small = set->For("cap").value()->RunArgvLimited("", {"echo", "hi"}, 4096);
  ASSERT_TRUE(small.ok());
  EXPECT_FALSE(small->output_limit);
  EXPECT_EQ(small->stdout_bytes, "hi\n");
}

TEST_F(Executors, TheExecutorLimitIsTyped) {
  ExecutorSetOptions options = Options();
  options.max_executors = 2;
  auto set = MakeSet(Policy(), options);
  ASSERT_TRUE(set);
  Executor* a = set->For("a").value();
  ASSERT_TRUE(set->For("b").ok());
  EXPECT_ERRC(set->For("c"), ExecutorErrc::kExecutorLimit);
  EXPECT_EQ(set->For("a").value(), a);
  a->Close();
  EXPECT_TRUE(set->For("c").ok());
}

TEST_F(Executors, EightThreadsShareOneSet) {
  auto set = MakeSet();
  ASSERT_TRUE(set);
  std::atomic<int> good = 0;
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int call = 0; call < 3; ++call) {
        corral::Result<Executor*> executor = set->For("key-" + std::to_string(t % 4));
        if (!executor.ok()) continue;
        std::string word = "t" + std::to_string(t) + "c" + std::to_string(call);
        auto out = (*executor)->RunArgv("", {"echo", word});
        good += out.ok() && out->stdout_bytes == word + "\n" && out->exit_code == 0;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(good.load(), 24);
}

// 8 executors, each on a thread of its own, leave no process, descriptor,
// mount, thread or scratch behind. (The issue's 8 x 200: the disabled soak.)
void Soak(Executors& fixture, int calls) {
  size_t fds = Entries("/proc/self/fd");
  size_t tasks = Entries("/proc/self/task");
  size_t mounts = Lines("/proc/self/mountinfo");
  std::string ns = std::filesystem::read_symlink("/proc/self/ns/pid");
  auto namespaces = [] {
    std::string all;
    for (const auto& entry : std::filesystem::directory_iterator("/proc/self/ns")) {
      all += std::filesystem::read_symlink(entry.path()).string() + "\n";
    }
    return all;
  };
  auto cgroups = [] {
    std::ifstream in("/proc/self/cgroup");
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  };
  std::string namespaces_before = namespaces(), cgroups_before = cgroups();
  auto started = std::chrono::steady_clock::now();
  std::unique_ptr<ExecutorSet> set = fixture.MakeSet();
  ASSERT_TRUE(set);
  std::atomic<int> good = 0;
  {
    std::vector<std::thread> threads;
    for (int e = 0; e < 8; ++e) {
      threads.emplace_back([&, e] {
        Executor* executor = set->For("soak-" + std::to_string(e)).value();
        for (int call = 0; call < calls; ++call) {
          auto out = executor->RunCommand("", "echo $((" + std::to_string(call) + " + 1)) > \"$TMPDIR/n\"; cat \"$TMPDIR/n\"");
          good += out.ok() && out->stdout_bytes == std::to_string(call + 1) + "\n";
        }
      });
    }
    for (std::thread& thread : threads) thread.join();
  }
  std::string scratch = set->scratch_path();
  set->Close();
  set.reset();
  EXPECT_EQ(good.load(), 8 * calls);
  EXPECT_EQ(Children(), 0);
  EXPECT_EQ(Entries("/proc/self/fd"), fds);
  EXPECT_EQ(Entries("/proc/self/task"), tasks);
  EXPECT_EQ(Lines("/proc/self/mountinfo"), mounts);
  EXPECT_EQ(std::filesystem::read_symlink("/proc/self/ns/pid"), ns);
  EXPECT_EQ(namespaces(), namespaces_before);
  EXPECT_EQ(cgroups(), cgroups_before);
  EXPECT_FALSE(Exists(scratch));
  std::printf("soak: 8 executors x %d calls in %lld ms\n", calls,
              static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                         std::chrono::steady_clock::now() - started)
                                         .count()));
}

TEST_F(Executors, SoakOfEightExecutorsLeavesNothingBehind) { Soak(*this, 12); }

TEST_F(Executors, SoakOfEightExecutorsTimesTwoHundred) { Soak(*this, 200); }

// The sandbox's init processes this process has as children, from the
// host's /proc (an executor's warm sandbox is one).
std::vector<pid_t> ChildPids() {
  std::vector<pid_t> pids;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    pid_t pid = static_cast<pid_t>(std::atoi(entry.path().filename().c_str()));
    if (pid <= 0) continue;
    std::optional<std::string> ppid = StatusField(pid, "PPid");
    if (ppid && std::atoi(ppid->c_str()) == ::getpid()) pids.push_back(pid);
  }
  return pids;
}

// The calls of one executor run in its warm sandbox: what call N put in
// /tmp call N+1 finds (a cold call's /tmp is a fresh tmpfs), while a
// process call N daemonised (setsid, double fork) is gone, seen from the
// host's /proc, before call N returns; one warm init stays, until Close.
TEST_F(Executors, CallsOfOneExecutorAreWarmAndShareNoProcess) {
  auto set = MakeSet();
  ASSERT_TRUE(set);
  Executor* executor = set->For("warm").value();
  EXPECT_NE(executor->Report().find("\"calls\": \"warm: "), std::string::npos) << executor->Report();
  std::string token = RandomToken("daemon");
  auto first = executor->RunCommand("", "echo kept > /tmp/warm-marker; (setsid sh -c 'sleep 1000; : " + token +
                                            "' &); sleep 0.2; echo started");
  ASSERT_TRUE(first.ok()) << first.error().ToString();
  EXPECT_EQ(first->stdout_bytes, "started\n");
  EXPECT_TRUE(ProcessesMatching(token).empty()) << "call N's daemon outlived it";
  std::vector<pid_t> inits = ChildPids();
  EXPECT_EQ(inits.size(), 1u) << "one warm sandbox's init";
  auto second = executor->RunCommand("", "cat /tmp/warm-marker; set -- /proc/[0-9]*; echo $#");
  ASSERT_TRUE(second.ok()) << second.error().ToString();
  EXPECT_EQ(second->stdout_bytes, "kept\n2\n") << "the same warm sandbox; init and sh only";
  EXPECT_EQ(ChildPids(), inits) << "the same init ran both calls";
  // Another executor has a sandbox (and a /tmp) of its own.
  auto other = set->For("other").value()->RunCommand("", "cat /tmp/warm-marker");
  ASSERT_TRUE(other.ok());
  EXPECT_NE(other->exit_code, 0);
  EXPECT_EQ(ChildPids().size(), 2u);
  // Close stops the warm sandboxes: no process is left, no zombie either.
  executor->Close();
  EXPECT_EQ(ChildPids().size(), 1u) << "the closed executor's warm sandbox is left";
  set->Close();
  EXPECT_EQ(Children(), 0);
  for (pid_t pid : ChildPids()) ::kill(pid, SIGKILL);  // under a mutant, not to leave them
}

// A seccomp filter and a Landlock layer call N adds itself (the probe
// stacks both, the layer denying every read) do not carry over: call N+1
// has the one filter and reads the file.
TEST_F(Executors, ACallsOwnLandlockAndSeccompLayersDoNotCarryOver) {
  ExecutorPolicy policy = Policy();
  policy.request.overrides.allow_exec.push_back(ProbesDir());
  auto set = MakeSet(std::move(policy), Options());
  ASSERT_TRUE(set);
  workspace_.Write("readme", "warm\n");
  Executor* executor = set->For("layers").value();
  auto stacked = executor->RunArgv("", {ProbePath("extra_layers"), workspace_ / "readme"});
  ASSERT_TRUE(stacked.ok()) << stacked.error().ToString();
  EXPECT_EQ(stacked->stdout_bytes, "filters=2 read=denied\n") << stacked->stderr_bytes;
  std::vector<pid_t> inits = ChildPids();
  EXPECT_EQ(inits.size(), 1u);
  auto next = executor->RunCommand("", "grep Seccomp_filters /proc/self/status; cat readme");
  ASSERT_TRUE(next.ok()) << next.error().ToString();
  EXPECT_EQ(next->stdout_bytes, "Seccomp_filters:\t1\nwarm\n") << next->stderr_bytes;
  EXPECT_EQ(ChildPids(), inits) << "both calls ran in the one warm sandbox";
}

// An init killed from outside loses the sandbox; the next call runs in a
// new one the executor started.
TEST_F(Executors, ACallAfterTheWarmSandboxWasLostRunsInANewOne) {
  auto set = MakeSet();
  ASSERT_TRUE(set);
  Executor* executor = set->For("lost").value();
  ASSERT_TRUE(executor->RunArgv("", {"/bin/true"}).ok());
  std::vector<pid_t> inits = ChildPids();
  ASSERT_EQ(inits.size(), 1u);
  ASSERT_EQ(::kill(inits[0], SIGKILL), 0);
  ASSERT_TRUE(WaitFor([&] { return StatusField(inits[0], "State").value_or("Z").rfind("Z", 0) == 0; }, 10s));
  for (int call = 0; call < 2; ++call) {
    auto out = executor->RunCommand("", "echo again > /tmp/again; cat /tmp/again");
    ASSERT_TRUE(out.ok()) << out.error().ToString();
    EXPECT_EQ(out->stdout_bytes, "again\n");
  }
  std::vector<pid_t> now = ChildPids();
  ASSERT_EQ(now.size(), 1u) << "the lost init is reaped, one new one runs";
  EXPECT_NE(now[0], inits[0]);
  set->Close();
  EXPECT_EQ(Children(), 0);
}

// Signal(kInterrupt) on a warm call reaches the command's process group
// (the warm init passes no signal sent to it on).
TEST_F(Executors, AnInterruptReachesAWarmCallsProcessGroup) {
  auto set = MakeSet();
  ASSERT_TRUE(set);
  Executor* executor = set->For("int").value();
  ASSERT_TRUE(executor->RunArgv("", {"/bin/true"}).ok());  // the warm sandbox runs
  std::vector<pid_t> inits = ChildPids();
  auto process = executor->PrepareProcess(
      ProcessOptions{.dir = "", .argv = {"/bin/sh", "-c", "trap 'exit 42' INT; echo ready; sleep 1000 & wait"}});
  ASSERT_TRUE(process.ok());
  ASSERT_TRUE((*process)->Start().ok());
  std::string seen;
  ASSERT_TRUE(ReadUntil((*process)->Stdout().value(), seen, "ready"));
  EXPECT_EQ(ChildPids(), inits) << "the process runs warm";
  ASSERT_TRUE((*process)->Signal(ProcessSignal::kInterrupt).ok());
  auto exit = (*process)->Wait();
  ASSERT_TRUE(exit.ok());
  EXPECT_EQ(exit->exit_code, 42);
  // The sandbox takes the next call.
  auto after = executor->RunArgv("", {"echo", "next"});
  ASSERT_TRUE(after.ok()) << after.error().ToString();
  EXPECT_EQ(after->stdout_bytes, "next\n");
  EXPECT_EQ(ChildPids(), inits);
}

// A harness that ignores SIGINT and SIGQUIT (a background job of a
// non-interactive shell does) or SIGTERM and SIGHUP: each warm call still
// starts with the four signals corral forwards at their defaults, as a cold
// command does, so an interrupt reaches it.
// The four signals corral forwards, ignored in this process for a scope.
class IgnoringForwardedSignals {
 public:
  IgnoringForwardedSignals() {
    struct sigaction ignore = {};
    ignore.sa_handler = SIG_IGN;
    for (size_t i = 0; i < 4; ++i) ::sigaction(kSignals[i], &ignore, &before_[i]);
  }
  ~IgnoringForwardedSignals() {
    for (size_t i = 0; i < 4; ++i) ::sigaction(kSignals[i], &before_[i], nullptr);
  }
  static constexpr int kSignals[4] = {SIGINT, SIGQUIT, SIGTERM, SIGHUP};

 private:
  struct sigaction before_[4];
};

TEST_F(Executors, AWarmCallsForwardedSignalsStartAtTheirDefaultsWhateverTheHarnessIgnores) {
  IgnoringForwardedSignals ignoring;
  auto set = MakeSet();
  ASSERT_TRUE(set);
  Executor* executor = set->For("ign").value();
  auto status = executor->RunArgv("", {"/bin/grep", "^SigIgn", "/proc/self/status"});
  ASSERT_TRUE(status.ok()) << status.error().ToString();
  unsigned long long mask = std::stoull(status->stdout_bytes.substr(status->stdout_bytes.find(':') + 1), nullptr, 16);
  for (int sig : IgnoringForwardedSignals::kSignals) {
    EXPECT_EQ(mask & (1ull << (sig - 1)), 0u) << "signal " << sig << " is ignored in the call";
  }
  // A deadline ends the shell if the interrupt does not.
  auto process = executor->PrepareProcess(
      ProcessOptions{.dir = "",
                     .argv = {"/bin/sh", "-c", "trap 'exit 42' INT; echo ready; sleep 1000 & wait"},
                     .deadline = std::chrono::seconds(10)});
  ASSERT_TRUE(process.ok());
  ASSERT_TRUE((*process)->Start().ok());
  std::string seen;
  ASSERT_TRUE(ReadUntil((*process)->Stdout().value(), seen, "ready"));
  ASSERT_TRUE((*process)->Signal(ProcessSignal::kInterrupt).ok());
  auto exit = (*process)->Wait();
  ASSERT_TRUE(exit.ok());
  EXPECT_EQ(exit->exit_code, 42) << "the interrupt reached the call's shell";
}

TEST_F(Executors, AGateRefusalIsTypedAndNothingRuns) {
  ExecutorPolicy policy = Policy();
  policy.request.approval = corral::ApprovalPolicy::kAskDangerous;
  std::string canary = workspace_ / "canary";
  const std::vector<std::string> dd = {"dd", "if=/dev/zero", "of=" + canary, "count=1"};
  {
    auto set = MakeSet(policy, Options());  // the default approver says no
    ASSERT_TRUE(set);
    EXPECT_ERRC(set->For("gate").value()->RunArgv("", dd), ExecutorErrc::kRefusedByGate);
    EXPECT_FALSE(Exists(canary));
    auto process = set->For("gate").value()->PrepareProcess(ProcessOptions{.dir = "", .argv = dd});
    ASSERT_TRUE(process.ok());
    EXPECT_ERRC((*process)->Start(), ExecutorErrc::kRefusedByGate);
    EXPECT_FALSE(Exists(canary));
  }
  // Control: an approver that says yes lets the same call run.
  AnswersYes yes;
  ExecutorSetOptions options = Options();
  options.approver = &yes;
  auto set = MakeSet(policy, options);
  ASSERT_TRUE(set);
  auto out = set->For("gate").value()->RunArgv("", dd);
  ASSERT_TRUE(out.ok()) << out.error().ToString();
  EXPECT_GE(yes.asked.load(), 1);
  EXPECT_TRUE(Exists(canary));
}

TEST_F(Executors, ACallsDirectoryMustLieInsideTheWorkspace) {
  workspace_.Mkdir("sub");
  ASSERT_EQ(::symlink(outside_.path().c_str(), (workspace_ / "out").c_str()), 0);
  auto set = MakeSet();
  ASSERT_TRUE(set);
  Executor* executor = set->For("cwd").value();
  auto here = executor->RunArgv("sub", {"pwd"});
  ASSERT_TRUE(here.ok()) << here.error().ToString();
  EXPECT_EQ(here->stdout_bytes, workspace_ / "sub\n");
  for (const std::string& dir : {workspace_ / "out", std::string("out"), workspace_ / "sub/../../" +
                                     std::filesystem::path(outside_.path()).filename().string(),
                                 outside_.path()}) {
    EXPECT_ERRC(executor->RunArgv(dir, {"touch", "ran"}), ExecutorErrc::kCwdOutsideWorkspace);
  }
  EXPECT_FALSE(Exists(outside_ / "ran"));
  EXPECT_FALSE(Exists(workspace_ / "ran"));
  EXPECT_FALSE(Exists(workspace_ / "sub/ran"));
}

TEST_F(Executors, AScratchRootThatIsASymlinkOrAnotherUsersIsRefused) {
  ASSERT_EQ(::symlink(scratch_.path().c_str(), (outside_ / "link").c_str()), 0);
  ExecutorSetOptions options = Options();
  options.scratch_root = outside_ / "link";
  EXPECT_ERRC(ExecutorSet::Create(Policy(), options), ExecutorErrc::kScratchUnsafe);
  // Another user's directory: for root, one given to uid 65534; for
  // everyone else, /tmp (root's).
  TempDir foreign("corral-foreign");
  if (::geteuid() == 0) {
    ASSERT_EQ(::chown(foreign.path().c_str(), 65534, 65534), 0);
  }
  options.scratch_root = ::geteuid() == 0 ? foreign.path() : "/tmp";
  EXPECT_ERRC(ExecutorSet::Create(Policy(), options), ExecutorErrc::kScratchUnsafe);
  EXPECT_EQ(Entries(scratch_.path()), 0u);
}

TEST_F(Executors, ClosingRemovesTheScratchWithoutFollowingPlantedSymlinks) {
  outside_.Write("precious/file", "keep me\n");
  auto set = MakeSet();
  ASSERT_TRUE(set);
  Executor* executor = set->For("plant").value();
  // The command plants symlinks to the caller's files and a directory it
  // cannot be read back from.
  auto out = executor->RunCommand(
      "", "ln -s " + outside_ / "precious" + " \"$HOME/link\"; ln -s " + outside_ / "precious/file" +
              " \"$TMPDIR/file\"; mkdir -p \"$HOME/locked/deep\"; chmod 000 \"$HOME/locked\"");
  ASSERT_TRUE(out.ok()) << out.error().ToString();
  std::string scratch = set->scratch_path();
  set->Close();
  EXPECT_FALSE(Exists(scratch));
  EXPECT_EQ(ReadFile(outside_ / "precious/file"), "keep me\n");
}

// A command can make its HOME as deep as it likes: closing the set removes
// it all with a bounded number of descriptors (and stack), also through
// directories it made unreadable and unwritable on the way down, so a deep
// tree neither leaves the scratch behind nor crashes the caller.
TEST_F(Executors, ClosingRemovesATreeDeeperThanTheDescriptorLimit) {
  auto set = MakeSet();
  ASSERT_TRUE(set);
  Executor* executor = set->For("deep").value();
  auto out = executor->RunCommand(
      "", "cd \"$HOME\" || exit 1; i=0; while [ $i -lt 600 ]; do mkdir d && cd d || exit 1; i=$((i+1)); done; "
          "echo bottom > f; p=\"$HOME\"; i=0; while [ $i -lt 40 ]; do p=\"$p/d\"; i=$((i+1)); "
          "if [ $i = 10 ]; then shallow=\"$p\"; fi; done; chmod 000 \"$p\" \"$shallow\" && echo made");
  ASSERT_TRUE(out.ok()) << out.error().ToString();
  ASSERT_EQ(out->stdout_bytes, "made\n") << out->stderr_bytes;
  std::string scratch = set->scratch_path();
  size_t open_now = Entries("/proc/self/fd");
  struct rlimit saved;
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &saved), 0);
  struct rlimit low = saved;
  low.rlim_cur = open_now + 200;  // far fewer than the tree's 600 levels
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &low), 0);
  set->Close();
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &saved), 0);
  EXPECT_FALSE(Exists(scratch));
}

TEST_F(Executors, APolicyFromConfigTextUsesTheConfigSchema) {
  ExecutorPolicy policy = Policy();
  corral::Result<std::string> toml = corral::executor::ConfigJsonToToml(R"({"sandbox": {"mode": "read-only"}})");
  ASSERT_TRUE(toml.ok()) << toml.error().ToString();
  policy.config_toml = *toml;
  auto set = MakeSet(policy, Options());
  ASSERT_TRUE(set);
  auto out = set->For("ro").value()->RunCommand("", "touch " + workspace_ / "written");
  ASSERT_TRUE(out.ok()) << out.error().ToString();
  EXPECT_NE(out->exit_code, 0);
  EXPECT_FALSE(Exists(workspace_ / "written"));
  set->Close();

  ExecutorPolicy bad = Policy();
  bad.config_toml = "[sandbox]\nno_such_key = 1\n";
  EXPECT_ERRC(ExecutorSet::Create(bad, Options()), ExecutorErrc::kPolicy);
  EXPECT_ERRC(corral::executor::ConfigJsonToToml("[1]"), ExecutorErrc::kPolicy);
  EXPECT_ERRC(corral::executor::ConfigJsonToToml(R"({"sandbox": {"a b": 1}})"), ExecutorErrc::kPolicy);
  EXPECT_EQ(Entries(scratch_.path()), 0u);  // a refused set leaves nothing
}

// A warm executor's sandbox was set up for the tree as it was: a secret a
// call writes where a forbid_read pattern matches must still be masked
// from the next call. Each call derives its plan afresh; the new mask is
// another fingerprint, so the executor leaves that sandbox for a new one.
// Judged from outside: the secret's bytes are not in the next call's output.
TEST_F(Executors, ASecretOneWarmCallWritesIsMaskedFromTheNext) {
  auto set = MakeSetWithConfig("[sandbox]\nforbid_read = [\"**/.env\"]\n");
  ASSERT_TRUE(set);
  Executor* one = set->For("one").value();
  auto first = one->RunCommand("", "mkdir -p sub && printf SECRET-7f3a > sub/.env && echo wrote");
  ASSERT_TRUE(first.ok()) << first.error().ToString();
  EXPECT_EQ(first->stdout_bytes, "wrote\n");
  EXPECT_NE(one->Report().find("warm"), std::string::npos) << one->Report();
  EXPECT_EQ(ReadFile(workspace_ / "sub/.env"), "SECRET-7f3a");  // it is there, seen from outside
  auto next = one->RunCommand("", "cat sub/.env; echo done");
  ASSERT_TRUE(next.ok()) << next.error().ToString();
  EXPECT_EQ(next->stdout_bytes.find("SECRET-7f3a"), std::string::npos) << next->stdout_bytes;
  EXPECT_EQ(next->stderr_bytes.find("SECRET-7f3a"), std::string::npos) << next->stderr_bytes;
  EXPECT_NE(next->stdout_bytes.find("done"), std::string::npos);
  set->Close();
}

// The sweep still runs after every warm call, and its write-ahead record
// is kept in one slot from call to call: marked done between calls (so no
// recovery sweeps what the user makes then), emptied when the executor
// closes. Judged from outside: the workspace and the journal's files.
TEST_F(Executors, EveryCallIsSweptAndItsJournalSlotIsKeptUntilClose) {
  auto set = MakeSet();
  ASSERT_TRUE(set);
  Executor* one = set->For("one").value();
  const std::string pending = state_ / "corral/pending";
  auto slots = [&pending] {
    std::map<std::string, std::string> found;  // the non-empty ones
    for (const auto& entry : std::filesystem::directory_iterator(pending)) {
      std::string text = ReadFile(entry.path().string()).value_or("");
      if (!text.empty()) found[entry.path().filename().string()] = text;
    }
    return found;
  };
  for (int call = 0; call < 3; ++call) {
    auto made = one->RunCommand("", "echo 'export PLANTED=1' > .envrc; echo made");
    ASSERT_TRUE(made.ok()) << made.error().ToString();
    EXPECT_EQ(made->stdout_bytes, "made\n");
    EXPECT_FALSE(Exists(workspace_ / ".envrc")) << "the sweep ran after call " << call;
    std::map<std::string, std::string> kept = slots();
    ASSERT_EQ(kept.size(), 1u) << "one slot for every call";
    EXPECT_EQ(kept.begin()->second.substr(0, 1), "D") << "done between calls";
  }
  workspace_.Write(".envrc", "the user's own\n");
  std::vector<corral::RecoveredSweep> recovered;
  {
    corral::Result<corral::StateDir> state = corral::StateDir::OpenBelow(state_.path(), corral::StateDir::Create::kNo);
    ASSERT_TRUE(state.ok()) << state.error().ToString();
    recovered = corral::RecoverInterruptedSweeps(*state);
  }
  EXPECT_TRUE(recovered.empty());
  EXPECT_EQ(ReadFile(workspace_ / ".envrc"), "the user's own\n") << "a done record is never swept";
  one->Close();
  EXPECT_TRUE(slots().empty()) << "emptied when the executor closed";
  set->Close();
}

}  // namespace
}  // namespace corral_it

namespace corral_it {
namespace {

// A call whose workspace, home and system trees are as the last call left
// them gets the last call's policy without deriving it again; that is
// checked here from the executor's own count, since the answer must be the
// same either way.
TEST_F(Executors, CallsReuseThePolicyWhileNothingItWasDerivedFromChanged) {
  auto set = MakeSetWithConfig("[sandbox]\nforbid_read = [\"**/.env\"]\n");
  ASSERT_TRUE(set);
  Executor* one = set->For("one").value();
  for (int i = 0; i < 4; ++i) {
    auto out = one->RunArgv("", {"/bin/true"});
    ASSERT_TRUE(out.ok()) << out.error().ToString();
  }
  Executor::PolicyDerivations derivations = one->policy_derivations();
  EXPECT_EQ(derivations.not_kept, "");
  EXPECT_EQ(derivations.derived, 1);
  EXPECT_EQ(derivations.reused, 3);
  EXPECT_EQ(derivations.observed, 1);
  set->Close();
}

// A workspace whose walk needs more watches than a kept policy may hold
// derives at every call, as before the cache: still hiding what it must,
// and observed (the costly way) only at calls 1, 4, 9, ... after each
// unwatchable one.
TEST_F(Executors, AWorkspaceTooBigToWatchDerivesEveryCallAndObservesRarely) {
  for (int i = 0; i < 2100; ++i) workspace_.Mkdir("d" + std::to_string(i));
  WriteFile(workspace_ / "d7/.env", "SECRET-5ee1");
  auto set = MakeSetWithConfig("[sandbox]\nforbid_read = [\"**/.env\"]\n");
  ASSERT_TRUE(set);
  Executor* one = set->For("one").value();
  for (int i = 0; i < 10; ++i) {
    auto out = one->RunCommand("", "cat d7/.env; echo done");
    ASSERT_TRUE(out.ok()) << out.error().ToString();
    EXPECT_EQ(out->stdout_bytes.find("SECRET-5ee1"), std::string::npos);
  }
  Executor::PolicyDerivations derivations = one->policy_derivations();
  EXPECT_EQ(derivations.derived, 10);
  EXPECT_EQ(derivations.reused, 0);
  EXPECT_EQ(derivations.observed, 3) << "calls 1, 4 and 9";
  EXPECT_NE(derivations.not_kept.find("more than"), std::string::npos) << derivations.not_kept;
  set->Close();
}

// What the last call's policy did not hide, because it was not there, is
// hidden once it is: made by a call's command, by someone outside, or by
// another executor's call in the same workspace. Judged from outside: the
// secret's bytes are not in the output.
TEST_F(Executors, WhatACallOrAnyoneMakesIsHiddenFromTheNextCall) {
  auto set = MakeSetWithConfig("[sandbox]\nforbid_read = [\"**/.env\"]\n");
  ASSERT_TRUE(set);
  Executor* one = set->For("one").value();
  Executor* two = set->For("two").value();
  for (Executor* executor : {one, two}) ASSERT_TRUE(executor->RunArgv("", {"/bin/true"}).ok());

  auto made = one->RunCommand("", "mkdir -p deep/er && printf SECRET-7f2a > deep/er/.env && echo made");
  ASSERT_TRUE(made.ok()) << made.error().ToString();
  ASSERT_EQ(made->stdout_bytes, "made\n") << made->stderr_bytes;
  ASSERT_EQ(ReadFile(workspace_ / "deep/er/.env"), "SECRET-7f2a");
  for (Executor* executor : {one, two}) {
    auto read = executor->RunCommand("", "cat deep/er/.env; echo done");
    ASSERT_TRUE(read.ok()) << read.error().ToString();
    EXPECT_EQ(read->stdout_bytes.find("SECRET-7f2a"), std::string::npos) << executor->key();
    EXPECT_NE(read->stdout_bytes.find("done"), std::string::npos);
  }

  // Made from outside, deeper than any directory a call has looked at.
  workspace_.Mkdir("out");
  workspace_.Mkdir("out/side");
  WriteFile(workspace_ / "out/side/.env", "SECRET-91bd");
  for (Executor* executor : {one, two}) {
    auto read = executor->RunCommand("", "cat out/side/.env; echo done");
    ASSERT_TRUE(read.ok()) << read.error().ToString();
    EXPECT_EQ(read->stdout_bytes.find("SECRET-91bd"), std::string::npos) << executor->key();
  }
  // A rename from outside puts a secret where no .env was.
  WriteFile(workspace_ / "out/side/plain", "SECRET-c0de");
  ASSERT_EQ(::rename((workspace_ / "out/side/plain").c_str(), (workspace_ / "out/side/.env").c_str()), 0);
  auto read = one->RunCommand("", "cat out/side/.env; echo done");
  ASSERT_TRUE(read.ok()) << read.error().ToString();
  EXPECT_EQ(read->stdout_bytes.find("SECRET-c0de"), std::string::npos);
  EXPECT_GE(one->policy_derivations().derived, 4);
  set->Close();
}

}  // namespace
}  // namespace corral_it
