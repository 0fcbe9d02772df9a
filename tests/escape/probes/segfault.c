/* Dies by SIGSEGV from a real fault. A fault's signal is forced, so even a
 * PID 1 (which ignores signals it has no handler for) dies by it: corral
 * must relay 128 + SIGSEGV. */
#include "probe.h"

int main(void) {
  volatile int *null = NULL;
  *null = 1;
  return PROBE_USAGE;
}
