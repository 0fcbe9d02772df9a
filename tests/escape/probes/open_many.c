/* Opens /dev/null until an open fails, then prints "opened N: <error>" with
 * the number of opens that succeeded, and exits PROBE_BLOCKED (or 0 when it
 * reached LIMIT opens without a failure). */
#include "probe.h"

int main(int argc, char **argv) {
  probe_args(argc, 1, "open_many LIMIT");
  long limit = strtol(argv[1], NULL, 10);
  long opened = 0;
  while (opened < limit) {
    if (open("/dev/null", O_RDONLY | O_CLOEXEC) < 0) {
      printf("opened %ld: %s\n", opened, strerror(errno));
      return probe_verdict(0);
    }
    ++opened;
  }
  printf("opened %ld: no failure\n", opened);
  fflush(stdout);
  return 0;
}
