#include "base/passwd_home.h"

#include <pwd.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>

#include "base/host_program.h"

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
  Result<HostProgramResult> run =
      RunHostProgram({program, "passwd", std::to_string(uid)}, {}, CapturedStream::kStdout, kGetentLimit, deadline);
  if (!run.ok() || run->timed_out || run->output.empty()) return std::nullopt;
  // A getent that failed counts as none. Where it could not be waited for
  // (SIGCHLD ignored: the kernel reaped it), its output alone decides:
  // getent prints an entry only when it found one.
  if (run->waited && run->exit_code != 0) return std::nullopt;
  FILE* answer = ::fmemopen(run->output.data(), run->output.size(), "r");
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
