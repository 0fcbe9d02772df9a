/* Opens files by handle, bypassing path checks: a handle taken by
 * name_to_handle_at, and a forged one for inode 2 (the usual root of ext4). */
#include "probe.h"

struct handle {
  struct file_handle head;
  unsigned char bytes[128];
};

int main(void) {
  struct handle h = {.head.handle_bytes = sizeof h.bytes};
  int mount_id = 0;
  int escaped = probe_try("name_to_handle_at /etc", syscall(SYS_name_to_handle_at, AT_FDCWD, "/etc", &h.head, &mount_id, 0));
  int root = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (escaped) escaped |= probe_try("open_by_handle_at (taken)", syscall(SYS_open_by_handle_at, root, &h.head, O_RDONLY));
  struct handle forged = {.head.handle_bytes = 8, .head.handle_type = 1 /* FILEID_INO32_GEN */};
  forged.bytes[0] = 2;
  escaped |= probe_try("open_by_handle_at (forged)", syscall(SYS_open_by_handle_at, root, &forged.head, O_RDONLY));
  return probe_verdict(escaped);
}
