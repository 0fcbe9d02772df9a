// TerminalState on a pty of the test's own, put on descriptor 0 in a forked
// child (Save looks at descriptors 0-2): every setting a command can leave
// behind is back after Restore, the ones seccomp denies in a run included.
#include "exec/terminal_state.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstring>

namespace corral {
namespace {

constexpr int kNullDiscipline = 27;  // N_NULL

enum ChildExit { kRestored = 0, kSetupFailed = 10, kChangeFailed, kModesDiffer, kDisciplineDiffers, kStillExclusive,
                 kOutputStopped };

int ChangeAndRestore(int slave) {
  if (::dup2(slave, 0) != 0) return kSetupFailed;
  struct termios before;
  if (::tcgetattr(0, &before) != 0) return kSetupFailed;
  TerminalState state = TerminalState::Save();

  struct termios changed = before;
  changed.c_lflag &= ~static_cast<tcflag_t>(ECHO | ICANON);
  changed.c_cc[VINTR] = 0;
  int discipline = kNullDiscipline;
  if (::tcsetattr(0, TCSANOW, &changed) != 0 || ::ioctl(0, TIOCEXCL) != 0 || ::tcflow(0, TCOOFF) != 0 ||
      ::ioctl(0, TIOCSETD, &discipline) != 0) {
    return kChangeFailed;
  }
  state.Restore();

  int now_discipline = -1, exclusive = -1;
  if (::ioctl(0, TIOCGETD, &now_discipline) != 0 || now_discipline != 0) return kDisciplineDiffers;
  struct termios after;
  if (::tcgetattr(0, &after) != 0 || after.c_lflag != before.c_lflag ||
      std::memcmp(after.c_cc, before.c_cc, sizeof after.c_cc) != 0) {
    return kModesDiffer;
  }
  if (::ioctl(0, TIOCGEXCL, &exclusive) != 0 || exclusive != 0) return kStillExclusive;
  int writer = ::open(("/proc/self/fd/" + std::to_string(slave)).c_str(), O_WRONLY | O_NONBLOCK | O_NOCTTY);
  if (writer < 0 || ::write(writer, ".", 1) != 1) return kOutputStopped;
  return kRestored;
}

TEST(TerminalState, RestoresEverySettingACommandCanLeave) {
  int master = ::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
  ASSERT_GE(master, 0);
  ASSERT_EQ(::grantpt(master), 0);
  ASSERT_EQ(::unlockpt(master), 0);
  int slave = ::open(::ptsname(master), O_RDWR | O_NOCTTY | O_CLOEXEC);
  ASSERT_GE(slave, 0);
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) ::_exit(ChangeAndRestore(slave));
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), kRestored);
  ::close(slave);
  ::close(master);
}

// With no terminal on 0-2 there is nothing to save and Restore does nothing.
TEST(TerminalState, NoTerminalIsNothingToRestore) {
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    int null = ::open("/dev/null", O_RDWR);
    for (int fd = 0; fd <= 2; ++fd) ::dup2(null, fd);
    TerminalState::Save().Restore();
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

}  // namespace
}  // namespace corral
