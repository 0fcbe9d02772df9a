/* Sets up an io_uring, whose operations bypass the per-syscall filter. */
#include "probe.h"

int main(void) {
  unsigned char params[120] = {0}; /* struct io_uring_params */
  return probe_verdict(probe_try("io_uring_setup", syscall(SYS_io_uring_setup, 4, params)));
}
