#include "exec/terminal_state.h"

#include <signal.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include "base/mutant.h"

namespace corral {

TerminalState TerminalState::Save() {
  TerminalState state;
  std::vector<dev_t> seen;
  for (int fd = 0; fd <= 2; ++fd) {
    struct stat st;
    if (::isatty(fd) == 0 || ::fstat(fd, &st) != 0) continue;
    if (std::find(seen.begin(), seen.end(), st.st_rdev) != seen.end()) continue;
    Saved saved{};
    saved.fd = fd;
    if (::tcgetattr(fd, &saved.modes) != 0 || ::ioctl(fd, TIOCGETD, &saved.line_discipline) != 0) continue;
    if (::ioctl(fd, TIOCGEXCL, &saved.exclusive) != 0) saved.exclusive = 0;
    seen.push_back(st.st_rdev);
    state.saved_.push_back(saved);
  }
  return state;
}

void TerminalState::Restore() const {
  if (saved_.empty() || MutantActive(Mutant::kTerminalRestore)) return;
  // A background corral changing its terminal would be stopped by SIGTTOU;
  // blocked, the change goes through.
  sigset_t ttou, previous;
  ::sigemptyset(&ttou);
  ::sigaddset(&ttou, SIGTTOU);
  ::pthread_sigmask(SIG_BLOCK, &ttou, &previous);
  for (const Saved& saved : saved_) {
    // The line discipline first: it is the one that answers flow control
    // and termios requests (N_NULL refuses them).
    int line_discipline = -1;
    if (::ioctl(saved.fd, TIOCGETD, &line_discipline) == 0 && line_discipline != saved.line_discipline) {
      ::ioctl(saved.fd, TIOCSETD, &saved.line_discipline);
    }
    ::tcflow(saved.fd, TCOON);
    ::tcsetattr(saved.fd, TCSANOW, &saved.modes);
    ::ioctl(saved.fd, saved.exclusive != 0 ? TIOCEXCL : TIOCNXCL);
  }
  ::pthread_sigmask(SIG_SETMASK, &previous, nullptr);
}

}  // namespace corral
