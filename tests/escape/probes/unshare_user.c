/* Creates a new user namespace (where it would hold every capability), by
 * unshare(2) and by clone(2). */
#include "probe.h"

#include <sched.h>
#include <signal.h>
#include <sys/wait.h>

int main(void) {
  int escaped = probe_try("unshare(CLONE_NEWUSER)", unshare(CLONE_NEWUSER));
  escaped |= probe_try("unshare(CLONE_NEWNS)", unshare(CLONE_NEWNS));
  long pid = syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0);
  if (pid == 0) _exit(0);
  if (probe_try("clone(CLONE_NEWUSER)", pid)) {
    waitpid((pid_t)pid, NULL, 0);
    escaped = 1;
  }
  return probe_verdict(escaped);
}
