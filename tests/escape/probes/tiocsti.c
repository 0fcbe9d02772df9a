/* Pushes a byte into the input of the terminal on stdin with TIOCSTI, after
 * making it the controlling terminal, with the plain request number and with
 * junk in the high 32 bits (which the kernel ignores). */
#include "probe.h"

#include <sys/ioctl.h>

int main(void) {
  setsid();
  probe_try("TIOCSCTTY", ioctl(0, TIOCSCTTY, 0));
  char c = 'x';
  int escaped = probe_try("ioctl(0, TIOCSTI)", ioctl(0, TIOCSTI, &c));
  unsigned long long request = (0xdead0000ull << 32) | TIOCSTI;
  escaped |= probe_try("ioctl(0, 0xdead0000|TIOCSTI)", syscall(SYS_ioctl, 0, request, &c));
  return probe_verdict(escaped);
}
