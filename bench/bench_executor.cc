// The executor library (src/executor/executor.h) against a bare spawn, side
// by side in one run, as ratios. Only the public APIs are used (C++, the C
// header, the Python binding), so this measures whatever an Executor call
// does on this build.
//
//   1. one call: posix_spawn("/bin/true") + waitpid from this process, and
//      Executor::RunArgv({"/bin/true"}), interleaved (A B A B ...), medians;
//   2. many calls: SEQUENTIAL calls in a row, and 8 threads x PER_THREAD
//      calls (8 executors of one set), each against the same with
//      posix_spawn, interleaved rounds, the median round's wall time;
//   3. syscall-heavy jobs: `find /usr -type f | wc -l` and `cc -O2 -c` of a
//      small file, by /bin/sh in a session of its own outside, and by
//      Executor::RunCommand inside; the shell times the job itself (so the
//      sandbox's set-up is not in it) and the whole call is timed too;
//   4. the same RunArgv({"/bin/true"}) through the C++ API, the C API
//      (include/corral/corral.h, libcorral.so) and the Python binding
//      (bindings/python, timed in Python by bench/bench_executor.py),
//      interleaved batches of CALLS, the median call.
//
// Every executor uses the same policy (kPolicy) and workspace. Nothing here
// is a pass/fail test: the goals are printed next to the numbers.
//
//   bench_executor WORKSPACE PYTHON_SCRIPT [RUNS] [ROUNDS] [SEQUENTIAL] [PER_THREAD] [JOB_ROUNDS] [CALLS]
//
// PYTHON_SCRIPT is bench/bench_executor.py; it finds the binding through
// $PYTHONPATH and libcorral.so through $CORRAL_LIBRARY (bench/executor.sh
// sets both).
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "corral/corral.h"
#include "executor/executor.h"

extern char** environ;

namespace {

using Clock = std::chrono::steady_clock;
using corral::executor::Executor;
using corral::executor::ExecutorPolicy;
using corral::executor::ExecutorSet;

constexpr const char* kPolicy = "[sandbox]\nmode = \"workspace-write\"\n";
constexpr int kThreads = 8;

[[noreturn]] void Fail(const std::string& what) {
  std::fprintf(stderr, "bench_executor: %s\n", what.c_str());
  std::exit(2);
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

double Fastest(const std::vector<double>& values) { return *std::min_element(values.begin(), values.end()); }

double MsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

enum class Session { kSame, kNew };

// posix_spawn + waitpid of `args` (argv[0] a path), stdin and stderr on
// /dev/null, stdout on `stdout_fd` (or /dev/null); what it wrote when
// `stdout_fd` is a file.
std::string Spawn(const std::vector<std::string>& args, Session session = Session::kSame, int stdout_fd = -1) {
  std::vector<char*> argv;
  for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  if (stdout_fd >= 0) {
    posix_spawn_file_actions_adddup2(&actions, stdout_fd, 1);
  } else {
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  }
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  if (session == Session::kNew) posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSID);
  pid_t pid;
  if (posix_spawn(&pid, argv[0], &actions, &attributes, argv.data(), environ) != 0) Fail("posix_spawn " + args[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) Fail(args[0] + " failed outside");
  if (stdout_fd < 0) return "";
  std::string out(1 << 20, '\0');
  ssize_t n = ::pread(stdout_fd, out.data(), out.size(), 0);
  out.resize(n > 0 ? static_cast<size_t>(n) : 0);
  return out;
}

void BareTrue() { Spawn({"/bin/true"}); }

void ExecutorTrue(Executor* executor) {
  corral::Result<corral::executor::RunOutput> out = executor->RunArgv("", {"/bin/true"});
  if (!out.ok()) Fail("RunArgv: " + out.error().ToString());
  if (out->exit_code != 0) Fail("/bin/true failed in the executor: " + out->stderr_bytes);
}

void CTrue(corral_executor* executor) {
  const char* const argv[] = {"/bin/true", nullptr};
  corral_run_result result;
  char* error = nullptr;
  if (corral_run_argv(executor, "", argv, 0, &result, &error) != CORRAL_OK) {
    std::string message = error != nullptr ? error : "";
    corral_string_free(error);
    Fail("corral_run_argv: " + message);
  }
  int code = result.exit_code;
  corral_run_result_free(&result);
  if (code != 0) Fail("/bin/true failed through the C API");
}

// `count` calls of `once` on each of `threads` threads; the wall time in ms.
double Parallel(int threads, int count, const std::function<void(int)>& once) {
  auto start = Clock::now();
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      for (int i = 0; i < count; ++i) once(t);
    });
  }
  for (std::thread& worker : workers) worker.join();
  return MsSince(start);
}

// A shell script that runs `job` in `workspace` and prints the job's own
// time in microseconds (and its output, which must be the same inside).
std::string TimedScript(const std::string& workspace, const std::string& job) {
  return "PATH=/usr/bin:/bin; cd '" + workspace + "' || exit 1; s=$(date +%s%N); out=$(" + job +
         ") || exit 1; e=$(date +%s%N); echo \"$(( (e - s) / 1000 )) $out\"";
}

struct Timed {
  double job_ms;
  double call_ms;
  std::string output;
};

Timed ParseTimed(const std::string& text, double call_ms) {
  std::istringstream in(text);
  long micros = -1;
  std::string output;
  in >> micros;
  std::getline(in, output);
  if (micros < 0) Fail("no timing in: " + text);
  return {static_cast<double>(micros) / 1000.0, call_ms, output};
}

int TemporaryFile() {
  char path[] = "/tmp/bench-executor.XXXXXX";
  int fd = ::mkstemp(path);
  if (fd < 0) Fail("mkstemp");
  ::unlink(path);
  return fd;
}

// The Python binding: CALLS calls timed in Python; the ms of each call.
std::vector<double> PythonCalls(const std::string& script, const std::string& workspace, int calls) {
  int fd = TemporaryFile();
  std::string out = Spawn({"/usr/bin/python3", script, workspace, std::to_string(calls), kPolicy}, Session::kSame, fd);
  ::close(fd);
  std::vector<double> ms;
  std::istringstream in(out);
  for (double value; in >> value;) ms.push_back(value);
  if (static_cast<int>(ms.size()) != calls) Fail("the Python benchmark printed " + std::to_string(ms.size()) + " calls");
  return ms;
}

const char* Goal(bool met) { return met ? "met" : "NOT met"; }

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr,
                 "usage: %s WORKSPACE PYTHON_SCRIPT [RUNS] [ROUNDS] [SEQUENTIAL] [PER_THREAD] [JOB_ROUNDS] [CALLS]\n",
                 argv[0]);
    return 2;
  }
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // each table as it is done
  const std::string workspace = argv[1];
  const std::string python_script = argv[2];
  auto arg = [&](int i, int fallback) { return argc > i ? std::atoi(argv[i]) : fallback; };
  const int runs = arg(3, 300);
  const int rounds = arg(4, 3);
  const int sequential = arg(5, 1000);
  const int per_thread = arg(6, 200);
  const int job_rounds = arg(7, 9);
  const int calls = arg(8, 100);
  if (std::min({runs, rounds, sequential, per_thread, job_rounds, calls}) < 1) {
    std::fprintf(stderr, "bench_executor: every count must be at least 1\n");
    return 2;
  }

  corral::Result<corral::HostContext> host = corral::CaptureHostContext();
  if (!host.ok()) Fail(host.error().ToString());
  ExecutorPolicy policy{.request = {}, .host = *host, .config_toml = kPolicy};
  policy.request.overrides.workspace = workspace;
  corral::Result<std::unique_ptr<ExecutorSet>> set = ExecutorSet::Create(std::move(policy));
  if (!set.ok()) Fail(set.error().ToString());
  auto executor = [&](const std::string& key) {
    corral::Result<Executor*> found = (*set)->For(key);
    if (!found.ok()) Fail(found.error().ToString());
    return *found;
  };
  Executor* one = executor("one");
  std::vector<Executor*> workers;
  for (int t = 0; t < kThreads; ++t) workers.push_back(executor("thread-" + std::to_string(t)));

  corral_policy* c_policy = nullptr;
  corral_set* c_set = nullptr;
  corral_executor* c_executor = nullptr;
  char* error = nullptr;
  if (corral_policy_from_toml(kPolicy, workspace.c_str(), &c_policy, &error) != CORRAL_OK ||
      corral_set_create(c_policy, nullptr, 0, &c_set, &error) != CORRAL_OK ||
      corral_set_executor(c_set, "c", &c_executor, &error) != CORRAL_OK) {
    Fail(std::string("C API: ") + (error != nullptr ? error : ""));
  }

  std::printf("uid %d, %u cores; executor level %d (0 full)\n\n", static_cast<int>(::getuid()),
              std::thread::hardware_concurrency(), static_cast<int>(one->level()));

  // 1. One call.
  std::vector<double> bare_ms;
  std::vector<double> executor_ms;
  BareTrue();
  ExecutorTrue(one);
  for (int i = 0; i < runs; ++i) {
    auto start = Clock::now();
    BareTrue();
    bare_ms.push_back(MsSince(start));
    start = Clock::now();
    ExecutorTrue(one);
    executor_ms.push_back(MsSince(start));
  }
  const double one_ratio = Median(executor_ms) / Median(bare_ms);
  std::printf("1. one call of /bin/true, %d runs each, interleaved, medians\n\n", runs);
  std::printf("| call | median ms | vs posix_spawn |\n|---|---|---|\n");
  std::printf("| posix_spawn + waitpid | %.3f | 1.00x |\n", Median(bare_ms));
  std::printf("| Executor::RunArgv | %.3f | %.2fx |\n", Median(executor_ms), one_ratio);
  std::printf("\ngoal <= 1.5x: %s\n\n", Goal(one_ratio <= 1.5));

  // 2. Many calls.
  std::vector<double> seq_bare;
  std::vector<double> seq_executor;
  std::vector<double> par_bare;
  std::vector<double> par_executor;
  for (int round = 0; round < rounds; ++round) {
    auto start = Clock::now();
    for (int i = 0; i < sequential; ++i) BareTrue();
    seq_bare.push_back(MsSince(start));
    start = Clock::now();
    for (int i = 0; i < sequential; ++i) ExecutorTrue(one);
    seq_executor.push_back(MsSince(start));
    par_bare.push_back(Parallel(kThreads, per_thread, [](int) { BareTrue(); }));
    par_executor.push_back(Parallel(kThreads, per_thread, [&](int t) { ExecutorTrue(workers[t]); }));
  }
  std::printf("2. many calls of /bin/true, %d interleaved rounds, the median round\n\n", rounds);
  std::printf("| calls | posix_spawn | executors | executors / posix_spawn |\n|---|---|---|---|\n");
  std::printf("| %d sequential | %.0f ms (%.3f ms/call) | %.0f ms (%.3f ms/call) | %.2fx |\n", sequential,
              Median(seq_bare), Median(seq_bare) / sequential, Median(seq_executor), Median(seq_executor) / sequential,
              Median(seq_executor) / Median(seq_bare));
  const double par_calls = kThreads * per_thread;
  std::printf("| %d threads x %d (%d executors) | %.0f ms (%.0f calls/s) | %.0f ms (%.0f calls/s) | %.2fx |\n\n",
              kThreads, per_thread, kThreads, Median(par_bare), par_calls * 1000 / Median(par_bare),
              Median(par_executor), par_calls * 1000 / Median(par_executor), Median(par_executor) / Median(par_bare));

  // 3. Syscall-heavy jobs.
  std::ofstream(workspace + "/bench-compile.c")
      << "#include <stdio.h>\n#include <string.h>\n"
         "int main(int argc, char** argv) { printf(\"%zu\\n\", strlen(argv[argc - 1])); }\n";
  struct Job {
    const char* name;
    std::string command;
    std::vector<Timed> outside;
    std::vector<Timed> inside;
  };
  std::vector<Job> jobs = {
      {"find /usr -type f \\| wc -l", "find /usr -type f | wc -l", {}, {}},
      {"cc -O2 -c of a small file", "cc -O2 -c bench-compile.c -o bench-compile.o", {}, {}},
  };
  for (int round = 0; round <= job_rounds; ++round) {  // round 0 warms the caches
    for (Job& job : jobs) {
      const std::string script = TimedScript(workspace, job.command);
      int fd = TemporaryFile();
      auto start = Clock::now();
      std::string text = Spawn({"/bin/sh", "-c", script}, Session::kNew, fd);
      Timed outside = ParseTimed(text, MsSince(start));
      ::close(fd);
      start = Clock::now();
      corral::Result<corral::executor::RunOutput> out = one->RunCommand("", script);
      if (!out.ok()) Fail("RunCommand: " + out.error().ToString());
      if (out->exit_code != 0) Fail(std::string(job.name) + " failed in the executor: " + out->stderr_bytes);
      Timed inside = ParseTimed(out->stdout_bytes, MsSince(start));
      if (round == 0) continue;
      job.outside.push_back(outside);
      job.inside.push_back(inside);
    }
  }
  std::printf("3. syscall-heavy jobs, %d interleaved rounds, median (fastest); the job timed by its shell, and the "
              "whole call\n\n",
              job_rounds);
  std::printf("| job | outside | in the executor | executor / outside | whole call outside | whole call executor | "
              "executor / outside |\n|---|---|---|---|---|---|---|\n");
  for (const Job& job : jobs) {
    auto field = [](const std::vector<Timed>& samples, double Timed::*member) {
      std::vector<double> values;
      for (const Timed& sample : samples) values.push_back(sample.*member);
      return values;
    };
    std::vector<double> out_job = field(job.outside, &Timed::job_ms);
    std::vector<double> in_job = field(job.inside, &Timed::job_ms);
    std::vector<double> out_call = field(job.outside, &Timed::call_ms);
    std::vector<double> in_call = field(job.inside, &Timed::call_ms);
    std::printf("| %s | %.1f ms (%.1f) | %.1f ms (%.1f) | %.2fx (%.2fx) | %.1f ms | %.1f ms | %.2fx |\n", job.name,
                Median(out_job), Fastest(out_job), Median(in_job), Fastest(in_job), Median(in_job) / Median(out_job),
                Fastest(in_job) / Fastest(out_job), Median(out_call), Median(in_call), Median(in_call) / Median(out_call));
  }
  std::printf("\nfind counted%s files outside and%s inside; goal: the job within 5%% of outside\n\n",
              jobs[0].outside[0].output.c_str(), jobs[0].inside[0].output.c_str());

  // 4. The C API and the Python binding against the C++ API.
  std::vector<double> cpp_ms;
  std::vector<double> c_ms;
  std::vector<double> python_ms;
  CTrue(c_executor);
  for (int round = 0; round < rounds; ++round) {
    for (int i = 0; i < calls; ++i) {
      auto start = Clock::now();
      ExecutorTrue(one);
      cpp_ms.push_back(MsSince(start));
    }
    for (int i = 0; i < calls; ++i) {
      auto start = Clock::now();
      CTrue(c_executor);
      c_ms.push_back(MsSince(start));
    }
    std::vector<double> batch = PythonCalls(python_script, workspace, calls);
    python_ms.insert(python_ms.end(), batch.begin(), batch.end());
  }
  std::printf("4. RunArgv({\"/bin/true\"}) through each API, %d interleaved rounds of %d calls, the median call\n\n",
              rounds, calls);
  std::printf("| API | median ms | vs C++ |\n|---|---|---|\n");
  std::printf("| C++ Executor::RunArgv | %.3f | 1.00x |\n", Median(cpp_ms));
  std::printf("| C corral_run_argv | %.3f | %.2fx |\n", Median(c_ms), Median(c_ms) / Median(cpp_ms));
  std::printf("| Python Executor.run | %.3f | %.2fx |\n", Median(python_ms), Median(python_ms) / Median(cpp_ms));

  corral_set_free(c_set);
  corral_policy_free(c_policy);
  (*set)->Close();
  return 0;
}
