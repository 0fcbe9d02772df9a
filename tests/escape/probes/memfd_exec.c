/* Copies itself into a memfd and executes that (fexecve and execveat): code
 * that never touched an exec grant. The copy, run with --payload, writes
 * CANARY, so a successful exec leaves evidence outside. */
#include "probe.h"

#include <sys/mman.h>

extern char **environ;

int main(int argc, char **argv) {
  probe_args(argc, 1, "memfd_exec CANARY | memfd_exec --payload CANARY");
  if (strcmp(argv[1], "--payload") == 0 && argc == 3) {
    int fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    return probe_verdict(probe_try(argv[2], fd));
  }
  int memfd = memfd_create("corral-probe", 0);
  if (!probe_try("memfd_create", memfd)) return probe_verdict(0);
  int self = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
  if (!probe_try("open /proc/self/exe", self)) return probe_verdict(0);
  char buffer[65536];
  ssize_t n;
  while ((n = read(self, buffer, sizeof buffer)) > 0) {
    if (write(memfd, buffer, (size_t)n) != n) return probe_verdict(0);
  }
  char *args[] = {argv[0], "--payload", argv[1], NULL};
  fflush(stdout);
  probe_try("fexecve", fexecve(memfd, args, environ));
  probe_try("execveat", syscall(SYS_execveat, memfd, "", args, environ, AT_EMPTY_PATH));
  char path[64];
  snprintf(path, sizeof path, "/proc/self/fd/%d", memfd);
  probe_try("execve /proc/self/fd", execve(path, args, environ));
  return probe_verdict(0);
}
