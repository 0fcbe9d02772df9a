#include "base/passwd_home.h"

#include <fcntl.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>

#include "base/unique_fd.h"

namespace corral {
namespace {

constexpr size_t kGetentLimit = 64 * 1024;

// The home of the first entry for `uid` in `file`, read by glibc's own
// parser of the files source (fgetpwent_r: blank and `#` lines skipped,
// leading blanks, malformed lines passed over), without the name service
// switch. NIS compat entries (`+name`, `-name`) are not entries.
std::optional<std::string> HomeIn(FILE* file, uid_t uid) {
  std::vector<char> buffer(4096);
  struct passwd entry;
  struct passwd* found = nullptr;
  for (;;) {
    int error = ::fgetpwent_r(file, &entry, buffer.data(), buffer.size(), &found);
    if (error == ERANGE && buffer.size() < (1u << 20)) {
      buffer.resize(buffer.size() * 2);  // the same line again, with room
      continue;
    }
    if (error != 0 || found == nullptr) return std::nullopt;
    if (entry.pw_name == nullptr || entry.pw_name[0] == '+' || entry.pw_name[0] == '-') continue;
    if (entry.pw_uid != uid || entry.pw_dir == nullptr) continue;
    return std::string(entry.pw_dir);
  }
}

std::optional<std::string> FromFile(uid_t uid, const std::string& path) {
  FILE* file = std::fopen(path.c_str(), "re");
  if (file == nullptr) return std::nullopt;
  std::optional<std::string> home = HomeIn(file, uid);
  std::fclose(file);
  return home;
}

// getent's answer, read within the deadline (a name service that does not
// answer ends it, killed); its entry counts only if it is for `uid`.
std::optional<std::string> FromGetent(uid_t uid, const std::string& program, std::chrono::milliseconds deadline) {
  int ends[2];
  if (::pipe2(ends, O_CLOEXEC) != 0) return std::nullopt;
  UniqueFd read_end(ends[0]), write_end(ends[1]);
  posix_spawn_file_actions_t actions;
  ::posix_spawn_file_actions_init(&actions);
  ::posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  ::posix_spawn_file_actions_adddup2(&actions, write_end.get(), 1);
  ::posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  posix_spawnattr_t attributes;
  ::posix_spawnattr_init(&attributes);
  sigset_t none;
  ::sigemptyset(&none);
  ::posix_spawnattr_setsigmask(&attributes, &none);
  ::posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK);
  std::string uid_text = std::to_string(uid);
  std::string database = "passwd";
  std::string name = program;
  char* argv[] = {name.data(), database.data(), uid_text.data(), nullptr};
  char* envp[] = {nullptr};
  pid_t pid = -1;
  int err = ::posix_spawn(&pid, program.c_str(), &actions, &attributes, argv, envp);
  ::posix_spawn_file_actions_destroy(&actions);
  ::posix_spawnattr_destroy(&attributes);
  write_end.Reset();
  if (err != 0) return std::nullopt;
  std::string out;
  bool timed_out = false;
  const auto until = std::chrono::steady_clock::now() + deadline;
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd ready = {read_end.get(), POLLIN, 0};
    int polled = ::poll(&ready, 1, static_cast<int>(left.count()));
    if (polled < 0 && errno == EINTR) continue;
    if (polled <= 0) continue;  // the deadline, checked above
    char buffer[4096];
    ssize_t n = ::read(read_end.get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (out.size() < kGetentLimit) out.append(buffer, static_cast<size_t>(n));
  }
  if (timed_out) ::kill(pid, SIGKILL);
  int status = -1;
  pid_t waited;
  while ((waited = ::waitpid(pid, &status, 0)) < 0 && errno == EINTR) {
  }
  if (timed_out) return std::nullopt;
  // A getent that failed counts as none. Where the child could not be
  // waited for (SIGCHLD ignored: the kernel reaped it), its output alone
  // decides: getent prints an entry only when it found one.
  if (waited == pid && (!WIFEXITED(status) || WEXITSTATUS(status) != 0)) return std::nullopt;
  if (out.empty()) return std::nullopt;
  FILE* answer = ::fmemopen(out.data(), out.size(), "r");
  if (answer == nullptr) return std::nullopt;
  std::optional<std::string> home = HomeIn(answer, uid);
  std::fclose(answer);
  return home;
}

}  // namespace

std::optional<std::string> PasswdHomeFrom(uid_t uid, const std::string& passwd_file,
                                          const std::vector<std::string>& getent_programs,
                                          std::chrono::milliseconds deadline) {
  std::optional<std::string> home = FromFile(uid, passwd_file);
  if (!home) {
    for (const std::string& program : getent_programs) {
      if (::access(program.c_str(), X_OK) != 0) continue;
      home = FromGetent(uid, program, deadline);
      break;
    }
  }
  if (!home || home->empty() || home->front() != '/') return std::nullopt;
  return home;
}

std::optional<std::string> PasswdHome(uid_t uid) {
  return PasswdHomeFrom(uid, "/etc/passwd", {"/usr/bin/getent", "/bin/getent"}, kGetentDeadline);
}

}  // namespace corral
