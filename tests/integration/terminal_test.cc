// TIOCSTI on a pty the test owns: a denial means no byte reached the pty's
// input queue (read on the slave) and nothing was echoed (read on the master).
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <termios.h>
#include <unistd.h>

#include "harness.h"

namespace corral_it {
namespace {

class Pty {
 public:
  Pty() {
    master_ = ::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (master_ < 0 || ::grantpt(master_) != 0 || ::unlockpt(master_) != 0) throw std::runtime_error("posix_openpt");
    slave_ = ::open(::ptsname(master_), O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (slave_ < 0) throw std::runtime_error("open pty slave");
    // Non-canonical with echo: an injected byte is readable at once on the
    // slave and echoed to the master.
    struct termios tio;
    ::tcgetattr(slave_, &tio);
    tio.c_lflag = (tio.c_lflag & ~static_cast<tcflag_t>(ICANON)) | ECHO;
    tio.c_cc[VMIN] = 0;
    tio.c_cc[VTIME] = 0;
    ::tcsetattr(slave_, TCSANOW, &tio);
  }
  ~Pty() {
    ::close(slave_);
    ::close(master_);
  }

  int slave() const { return slave_; }
  // Whatever is waiting on either side, after up to 300 ms.
  std::string Injected() const { return Drain(master_, 300) + Drain(slave_, 0); }

 private:
  static std::string Drain(int fd, int wait_ms) {
    std::string bytes;
    struct pollfd pfd = {fd, POLLIN, 0};
    while (::poll(&pfd, 1, wait_ms) > 0 && (pfd.revents & POLLIN) != 0) {
      char buffer[256];
      ssize_t n = ::read(fd, buffer, sizeof buffer);
      if (n <= 0) break;
      bytes.append(buffer, static_cast<size_t>(n));
    }
    return bytes;
  }
  int master_ = -1, slave_ = -1;
};

using TerminalEscape = SandboxTest;

TEST_F(TerminalEscape, TiocstiCannotInjectIntoAPty) {
  // Control, where the host allows TIOCSTI at all: outside corral the probe
  // does inject.
  if (ReadFile("/proc/sys/dev/tty/legacy_tiocsti").value_or("1") != "0\n") {
    Pty bare;
    SpawnOptions options;
    options.stdin_fd = bare.slave();
    Execute({ProbePath("tiocsti")}, options);
    EXPECT_NE(bare.Injected().find('x'), std::string::npos);
  }
  Pty pty;
  SpawnOptions options;
  options.stdin_fd = pty.slave();
  EXPECT_PROBE_BLOCKED(Probe("tiocsti", {}, {}, options));
  EXPECT_EQ(pty.Injected(), "");
}

}  // namespace
}  // namespace corral_it
