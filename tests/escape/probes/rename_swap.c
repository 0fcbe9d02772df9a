/* Renames A to B and back, as fast as it can, for MILLISECONDS: the racer
 * that moves a tree while another run computes its masks. With a fourth
 * argument "exchange", A and B both exist and swap places (renameat2
 * RENAME_EXCHANGE) instead. Exits PROBE_ESCAPED when at least one rename
 * succeeded. */
#include "probe.h"

#include <stdio.h>
#include <time.h>

static long now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

int main(int argc, char **argv) {
  probe_args(argc, 3, "rename_swap A B MILLISECONDS");
  long end = now_ms() + atol(argv[3]);
  long swaps = 0;
  int exchange = argc > 4 && strcmp(argv[4], "exchange") == 0;
  while (now_ms() < end) {
    if (exchange) {
      if (syscall(SYS_renameat2, AT_FDCWD, argv[1], AT_FDCWD, argv[2], 2 /* RENAME_EXCHANGE */) == 0) ++swaps;
      continue;
    }
    if (rename(argv[1], argv[2]) == 0) ++swaps;
    if (rename(argv[2], argv[1]) == 0) ++swaps;
  }
  printf("renames: %ld\n", swaps);
  return probe_verdict(swaps > 0);
}
