/* Reads the environment of a process by PID, through /proc/PID/environ, and
 * its memory through /proc/PID/mem at the environment's address. */
#include "probe.h"

int main(int argc, char **argv) {
  probe_args(argc, 1, "proc_environ PID...");
  int escaped = 0;
  for (int i = 1; i < argc; ++i) {
    char path[64];
    snprintf(path, sizeof path, "/proc/%s/environ", argv[i]);
    escaped |= probe_dump_at(AT_FDCWD, path);
    snprintf(path, sizeof path, "/proc/%s/mem", argv[i]);
    escaped |= probe_try(path, open(path, O_RDONLY | O_CLOEXEC));
  }
  return probe_verdict(escaped);
}
