/* Stacks layers of its own on top of the sandbox's, as a command of one
 * warm call may: a seccomp filter (allow everything) and a Landlock domain
 * that handles reading files and grants nothing. Then prints its
 * Seccomp_filters count and whether FILE can still be opened for reading
 * ("filters=N read=denied|allowed"), and exits 0. The next warm call must
 * show neither layer (tests/integration/warm_test.cc). */
#include "probe.h"

#include <linux/filter.h>
#include <linux/landlock.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>

static int seccomp_filters(void) {
  FILE *status = fopen("/proc/self/status", "r");
  char line[256];
  int count = -1;
  while (status != NULL && fgets(line, sizeof line, status) != NULL) {
    if (strncmp(line, "Seccomp_filters:", 16) == 0) count = atoi(line + 16);
  }
  if (status != NULL) fclose(status);
  return count;
}

int main(int argc, char **argv) {
  probe_args(argc, 1, "extra_layers FILE");
  struct sock_filter allow[] = {BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)};
  struct sock_fprog program = {.len = 1, .filter = allow};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) != 0) {
    perror("seccomp");
    return 1;
  }
  int filters = seccomp_filters();  /* before the domain, which denies reading /proc too */
  struct landlock_ruleset_attr attr = {.handled_access_fs = LANDLOCK_ACCESS_FS_READ_FILE};
  int ruleset = (int)syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0);
  if (ruleset < 0 || syscall(SYS_landlock_restrict_self, ruleset, 0) != 0) {
    perror("landlock");
    return 1;
  }
  int fd = open(argv[1], O_RDONLY | O_CLOEXEC);
  printf("filters=%d read=%s\n", filters, fd >= 0 ? "allowed" : "denied");
  return 0;
}
