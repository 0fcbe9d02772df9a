/* Allocates MIB mebibytes and touches every page: a memory hog. Prints
 * "allocated" and exits 0 when it got them all, or names the failure and
 * exits PROBE_BLOCKED. TOKEN makes its command line unique. */
#include "probe.h"

#include <sys/mman.h>

int main(int argc, char **argv) {
  probe_args(argc, 2, "alloc MIB TOKEN");
  size_t bytes = (size_t)strtoull(argv[1], NULL, 10) * 1024 * 1024;
  char *memory = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) {
    printf("mmap %s MiB: blocked (%s)\n", argv[1], strerror(errno));
    return probe_verdict(0);
  }
  for (size_t i = 0; i < bytes; i += 4096) memory[i] = 1;
  printf("allocated\n");
  fflush(stdout);
  return 0;
}
