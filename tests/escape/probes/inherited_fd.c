/* Uses directory descriptors the caller left open (without O_CLOEXEC) to open
 * NAME beneath them, directly and through /proc/self/fd. */
#include "probe.h"

int main(int argc, char **argv) {
  probe_args(argc, 2, "inherited_fd NAME FD...");
  int escaped = 0;
  for (int i = 2; i < argc; ++i) {
    int fd = atoi(argv[i]);
    printf("fd %d\n", fd);
    escaped |= probe_dump_at(fd, argv[1]);
    char path[4096];
    snprintf(path, sizeof path, "/proc/self/fd/%d/%s", fd, argv[1]);
    escaped |= probe_dump_at(AT_FDCWD, path);
  }
  return probe_verdict(escaped);
}
