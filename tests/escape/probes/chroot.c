/* Changes root to DIR, then writes /NAME: the file lands in DIR only if the
 * chroot took effect. */
#include "probe.h"

int main(int argc, char **argv) {
  probe_args(argc, 2, "chroot DIR NAME");
  int escaped = probe_try("chroot", chroot(argv[1]));
  char path[4096];
  snprintf(path, sizeof path, "/%s", argv[2]);
  probe_try(path, open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  return probe_verdict(escaped);
}
