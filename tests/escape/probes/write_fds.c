/* Writes TEXT to every descriptor from 3 to 1023, as a command would that
 * looks for a channel its caller left open (an approval socket). */
#include "probe.h"

int main(int argc, char **argv) {
  probe_args(argc, 1, "write_fds TEXT");
  int escaped = 0;
  size_t length = strlen(argv[1]);
  for (int fd = 3; fd < 1024; ++fd) {
    if (write(fd, argv[1], length) >= 0) {
      printf("fd %d: written\n", fd);
      escaped = 1;
    }
  }
  return escaped ? PROBE_ESCAPED : PROBE_BLOCKED;
}
