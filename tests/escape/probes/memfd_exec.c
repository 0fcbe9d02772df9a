/* Copies itself into a memfd and executes that (fexecve, then execveat and
 * /proc/self/fd): code that never touched an exec grant. The copy runs with
 * --payload and tries to create each CANARY, so what the exec'd code could do
 * is visible outside. */
#include "probe.h"

#include <sys/mman.h>

extern char **environ;

static int payload(int argc, char **argv) {
  int escaped = 0;
  for (int i = 2; i < argc; ++i) escaped |= probe_try(argv[i], open(argv[i], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  return probe_verdict(escaped);
}

int main(int argc, char **argv) {
  probe_args(argc, 1, "memfd_exec CANARY... | memfd_exec --payload CANARY...");
  if (strcmp(argv[1], "--payload") == 0) return payload(argc, argv);
  int memfd = memfd_create("corral-probe", 0);
  if (!probe_try("memfd_create", memfd)) return probe_verdict(0);
  int self = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
  if (!probe_try("open /proc/self/exe", self)) return probe_verdict(0);
  char buffer[65536];
  ssize_t n;
  while ((n = read(self, buffer, sizeof buffer)) > 0) {
    if (write(memfd, buffer, (size_t)n) != n) return probe_verdict(0);
  }
  char **args = calloc((size_t)argc + 2, sizeof *args);
  args[0] = argv[0];
  args[1] = "--payload";
  for (int i = 1; i < argc; ++i) args[i + 1] = argv[i];
  fflush(stdout);
  probe_try("fexecve", fexecve(memfd, args, environ));
  probe_try("execveat", syscall(SYS_execveat, memfd, "", args, environ, AT_EMPTY_PATH));
  char path[64];
  snprintf(path, sizeof path, "/proc/self/fd/%d", memfd);
  probe_try("execve /proc/self/fd", execve(path, args, environ));
  return probe_verdict(0);
}
