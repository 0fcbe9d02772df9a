// Side-by-side spawn benchmark: corral against a bare exec and bubblewrap.
//
// Runs the three commands interleaved, each round in the reverse order of the
// one before (A B C C B A A B C ...), so drift in the
// machine's load hits all of them alike, and prints each median wall time
// and the ratios. Every command's stdio goes to /dev/null. A second corral
// (an older build, say) joins the same interleaved run as a fourth command,
// for a side-by-side comparison of two builds under the same load.
// BENCH_BASELINE_ENV=NAME=VALUE adds one variable to the baseline's
// environment alone: with a mutants build as both, CORRAL_MUTANT=NAME
// compares one defence off against on (bench/reap.sh).
//
//   bench_spawn <corral> <workspace> [runs] [baseline-corral]
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

extern char** environ;

namespace {

struct Case {
  std::string name;
  std::vector<std::string> argv;
  std::vector<double> samples_ms;
  std::vector<std::string> extra_env = {};
};

double RunOnce(const std::vector<std::string>& args, const std::string& cwd,
               const std::vector<std::string>& extra_env = {}) {
  std::vector<char*> envp;
  for (char** entry = environ; *entry != nullptr; ++entry) envp.push_back(*entry);
  for (const std::string& entry : extra_env) envp.push_back(const_cast<char*>(entry.c_str()));
  envp.push_back(nullptr);
  std::vector<char*> argv;
  for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  for (int fd = 0; fd < 3; ++fd) {
    posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0);
  }
  posix_spawn_file_actions_addchdir_np(&actions, cwd.c_str());
  auto start = std::chrono::steady_clock::now();
  pid_t pid;
  if (posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), envp.data()) != 0) {
    std::perror(argv[0]);
    std::exit(2);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  auto end = std::chrono::steady_clock::now();
  posix_spawn_file_actions_destroy(&actions);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::fprintf(stderr, "bench: %s failed (status %d)\n", argv[0], status);
    std::exit(2);
  }
  return std::chrono::duration<double, std::milli>(end - start).count();
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s CORRAL WORKSPACE [RUNS] [BASELINE_CORRAL]\n", argv[0]);
    return 2;
  }
  std::string corral = argv[1];
  std::string workspace = argv[2];
  int runs = argc > 3 ? std::atoi(argv[3]) : 300;
  std::vector<Case> cases = {
      {"corral run -- /bin/true", {corral, "run", "--", "/bin/true"}, {}},
      {"/bin/true (bare exec)", {"/bin/true"}, {}},
      {"bwrap --ro-bind / / --dev /dev --proc /proc --unshare-all --die-with-parent -- /bin/true",
       {"/usr/bin/bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-all",
        "--die-with-parent", "--", "/bin/true"},
       {}},
  };
  if (argc > 4) {
    const char* env = std::getenv("BENCH_BASELINE_ENV");
    std::vector<std::string> extra;
    if (env != nullptr && *env != '\0') extra.push_back(env);
    cases.push_back({std::string("baseline ") + argv[4] + (extra.empty() ? "" : " (" + extra[0] + ")") +
                         " run -- /bin/true",
                     {argv[4], "run", "--", "/bin/true"},
                     {},
                     extra});
  }
  for (int warm = 0; warm < 10; ++warm) {
    for (Case& c : cases) RunOnce(c.argv, workspace, c.extra_env);
  }
  // Every other round runs the cases in reverse: a run pays for what the run
  // before it left the kernel to finish (a network namespace is torn down
  // by a worker after its last process exits), so a fixed order would
  // favour whichever case follows the cheapest one.
  for (int i = 0; i < runs; ++i) {
    for (size_t k = 0; k < cases.size(); ++k) {
      Case& c = cases[i % 2 == 0 ? k : cases.size() - 1 - k];
      c.samples_ms.push_back(RunOnce(c.argv, workspace, c.extra_env));
    }
  }
  double corral_ms = Median(cases[0].samples_ms);
  double bare_ms = Median(cases[1].samples_ms);
  double bwrap_ms = Median(cases[2].samples_ms);
  std::printf("%d interleaved runs each, median wall time\n\n", runs);
  std::printf("| command | median |\n|---|---|\n");
  for (const Case& c : cases) std::printf("| `%s` | %.2f ms |\n", c.name.c_str(), Median(c.samples_ms));
  std::printf("\ncorral / bwrap = %.2fx   (goal: <= 0.60x)\n", corral_ms / bwrap_ms);
  std::printf("corral / bare  = %.2fx\n", corral_ms / bare_ms);
  if (cases.size() > 3) {
    double baseline_ms = Median(cases[3].samples_ms);
    std::printf("baseline / bwrap = %.2fx   corral / baseline = %.2fx\n", baseline_ms / bwrap_ms, corral_ms / baseline_ms);
  }
  return 0;
}
