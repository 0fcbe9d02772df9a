/* Tries to leave a set-user-ID or set-group-ID file in DIR, by each call
 * that sets a mode: chmod, fchmod, fchmodat, fchmodat2, open and creat with
 * the bits, mknod of a regular file, and openat2 followed by a write. Each
 * chmod target is written first, so a file whose mode call was refused
 * still exists to be inspected from outside. */
#include "probe.h"

#include <linux/openat2.h>
#include <sys/stat.h>

static int make(const char *dir, const char *name, char *path, size_t size) {
  snprintf(path, size, "%s/%s", dir, name);
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
  if (fd >= 0) {
    (void)!write(fd, "#!/bin/sh\nid\n", 13);
  }
  return fd;
}

int main(int argc, char **argv) {
  probe_args(argc, 1, "setuid_file DIR");
  const char *dir = argv[1];
  char path[4096];
  int escaped = 0;

  int fd = make(dir, "chmod", path, sizeof path);
  if (fd >= 0) close(fd);
  escaped |= probe_try("chmod 04755", chmod(path, 04755));
  fd = make(dir, "chmod-gid", path, sizeof path);
  if (fd >= 0) close(fd);
  escaped |= probe_try("chmod 02755", chmod(path, 02755));
  fd = make(dir, "fchmod", path, sizeof path);
  escaped |= probe_try("fchmod 04755", fchmod(fd, 04755));
  if (fd >= 0) close(fd);
  fd = make(dir, "fchmodat", path, sizeof path);
  if (fd >= 0) close(fd);
  escaped |= probe_try("fchmodat 06755", fchmodat(AT_FDCWD, path, 06755, 0));
  fd = make(dir, "fchmodat2", path, sizeof path);
  if (fd >= 0) close(fd);
  escaped |= probe_try("fchmodat2 04755", syscall(452, AT_FDCWD, path, 04755, 0));

  snprintf(path, sizeof path, "%s/open", dir);
  fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 04755);
  escaped |= probe_try("open O_CREAT 04755", fd);
  snprintf(path, sizeof path, "%s/creat", dir);
  escaped |= probe_try("creat 02755", creat(path, 02755));
  snprintf(path, sizeof path, "%s/mknod", dir);
  escaped |= probe_try("mknod S_IFREG|04755", mknod(path, S_IFREG | 04755, 0));
  snprintf(path, sizeof path, "%s/openat2", dir);
  /* openat2's mode is out of seccomp's sight: it creates the file with the
   * bit, which the first write must clear (no CAP_FSETID in the sandbox). */
  struct open_how how = {.flags = O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, .mode = 04755};
  fd = (int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof how);
  if (fd >= 0) {
    (void)!write(fd, "#!/bin/sh\nid\n", 13);
    struct stat st;
    if (fstat(fd, &st) == 0 && (st.st_mode & (S_ISUID | S_ISGID)) != 0) {
      printf("openat2 04755 then write: SUCCEEDED (mode %o)\n", st.st_mode);
      escaped = 1;
    } else {
      printf("openat2 04755 then write: blocked (the write cleared the bit)\n");
    }
    close(fd);
  }
  return probe_verdict(escaped);
}
