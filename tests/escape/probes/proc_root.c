/* Reads PATH through /proc/PID/root of a host process, which would resolve in
 * that process's root instead of the sandbox's. */
#include "probe.h"

int main(int argc, char **argv) {
  probe_args(argc, 2, "proc_root PID /ABSOLUTE/PATH");
  char path[4096];
  snprintf(path, sizeof path, "/proc/%s/root%s", argv[1], argv[2]);
  int escaped = probe_dump_at(AT_FDCWD, path);
  /* The same through a directory descriptor on that root. */
  snprintf(path, sizeof path, "/proc/%s/root", argv[1]);
  int root = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (probe_try(path, root)) escaped |= probe_dump_at(root, argv[2] + 1);
  return probe_verdict(escaped);
}
