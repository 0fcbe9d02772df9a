#include "base/host_program.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "base/await_ready.h"
#include "base/unique_fd.h"

namespace corral {
namespace {

std::vector<char*> Pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (std::string& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

}  // namespace

Result<HostProgramResult> RunHostProgram(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                                         CapturedStream captured, size_t limit, std::chrono::milliseconds deadline) {
  if (argv.empty() || argv[0].empty() || argv[0].front() != '/') {
    return Error(ErrorKind::kInternal, "a host program needs an absolute path");
  }
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return Error::FromErrno(ErrorKind::kIo, "cannot run " + argv[0], "pipe2", errno);
  UniqueFd read_end(fds[0]), write_end(fds[1]);
  const int kept = captured == CapturedStream::kStdout ? STDOUT_FILENO : STDERR_FILENO;
  const int dropped = captured == CapturedStream::kStdout ? STDERR_FILENO : STDOUT_FILENO;

  posix_spawn_file_actions_t actions;
  ::posix_spawn_file_actions_init(&actions);
  ::posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  ::posix_spawn_file_actions_addopen(&actions, dropped, "/dev/null", O_WRONLY, 0);
  ::posix_spawn_file_actions_adddup2(&actions, write_end.get(), kept);
  posix_spawnattr_t attributes;
  ::posix_spawnattr_init(&attributes);
  sigset_t none;
  ::sigemptyset(&none);
  ::posix_spawnattr_setsigmask(&attributes, &none);
  ::posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK);

  std::vector<std::string> args = argv, envs = env;
  std::vector<char*> arg_pointers = Pointers(args), env_pointers = Pointers(envs);
  pid_t pid = -1;
  int err = ::posix_spawn(&pid, args[0].c_str(), &actions, &attributes, arg_pointers.data(), env_pointers.data());
  ::posix_spawn_file_actions_destroy(&actions);
  ::posix_spawnattr_destroy(&attributes);
  write_end.Reset();
  if (err != 0) return Error::FromErrno(ErrorKind::kExec, "cannot run " + argv[0], "posix_spawn", err);

  HostProgramResult result;
  const auto until = std::chrono::steady_clock::now() + deadline;
  for (;;) {
    if (!AwaitReady(read_end.get(), POLLIN, until)) {
      result.timed_out = true;
      ::kill(pid, SIGKILL);
      break;
    }
    char buffer[4096];
    ssize_t n = ::read(read_end.get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // EOF: the program (and anything it left behind) closed the stream
    if (result.output.size() < limit) {
      result.output.append(buffer, std::min(static_cast<size_t>(n), limit - result.output.size()));
    }
  }
  int status = 0;
  pid_t waited;
  while ((waited = ::waitpid(pid, &status, 0)) < 0 && errno == EINTR) {
  }
  result.waited = waited == pid;
  if (result.waited && WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  return result;
}

}  // namespace corral
