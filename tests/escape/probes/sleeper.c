/* Sleeps until killed, so a test can inspect it from outside (its
 * /proc/PID/status). TOKEN makes its command line unique. */
#include "probe.h"

int main(int argc, char **argv) {
  probe_args(argc, 1, "sleeper TOKEN");
  (void)argv;
  for (;;) pause();
}
