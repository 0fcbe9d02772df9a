/* Mounts a tmpfs over DIR (old and new mount API), then writes DIR/NAME: the
 * file reaches the host only if DIR is still the host's directory. */
#include "probe.h"

#include <sys/mount.h>

int main(int argc, char **argv) {
  probe_args(argc, 2, "mount DIR NAME");
  int escaped = probe_try("mount tmpfs", mount("tmpfs", argv[1], "tmpfs", 0, NULL));
  escaped |= probe_try("remount / read-write", mount(NULL, "/", NULL, MS_REMOUNT | MS_BIND, NULL));
  escaped |= probe_try("fsopen tmpfs", syscall(SYS_fsopen, "tmpfs", 0));
  escaped |= probe_try("open_tree clone", syscall(SYS_open_tree, AT_FDCWD, argv[1], 1 /* OPEN_TREE_CLONE */));
  escaped |= probe_try("umount /proc", umount2("/proc", MNT_DETACH));
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", argv[1], argv[2]);
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  probe_try(path, fd);
  return probe_verdict(escaped);
}
