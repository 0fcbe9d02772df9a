/* Attaches to a host process by PID with ptrace; on success it kills the
 * tracee, so an escape leaves evidence outside. */
#include "probe.h"

#include <signal.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

int main(int argc, char **argv) {
  probe_args(argc, 1, "ptrace_decoy PID");
  pid_t pid = (pid_t)atoi(argv[1]);
  int escaped = probe_try("PTRACE_ATTACH", ptrace(PTRACE_ATTACH, pid, 0, 0));
  if (!escaped) escaped = probe_try("PTRACE_SEIZE", ptrace(PTRACE_SEIZE, pid, 0, 0));
  if (escaped) {
    waitpid(pid, NULL, __WALL);
    ptrace(PTRACE_CONT, pid, 0, SIGKILL);
  }
  return probe_verdict(escaped);
}
