/* Changes the terminal on stdin in ways that outlive a process: echo and
 * canonical mode off (termios), exclusive mode (TIOCEXCL), output stopped
 * (tcflow TCOOFF) and the line discipline (TIOCSETD to N_NULL). Exits
 * PROBE_ESCAPED when a denied ioctl (TIOCEXCL, TIOCSETD) went through; the
 * test judges every setting from outside after the run. */
#include "probe.h"

#include <sys/ioctl.h>
#include <termios.h>

#define N_NULL_DISCIPLINE 27

int main(void) {
  struct termios modes;
  if (tcgetattr(0, &modes) == 0) {
    modes.c_lflag &= ~(tcflag_t)(ECHO | ICANON);
    probe_try("tcsetattr -echo -icanon", tcsetattr(0, TCSANOW, &modes));
  }
  int escaped = probe_try("ioctl(0, TIOCEXCL)", ioctl(0, TIOCEXCL));
  probe_try("tcflow(0, TCOOFF)", tcflow(0, TCOOFF));
  int discipline = N_NULL_DISCIPLINE;
  escaped |= probe_try("ioctl(0, TIOCSETD, N_NULL)", ioctl(0, TIOCSETD, &discipline));
  return probe_verdict(escaped);
}
