/* Signals a host process by PID: kill(2) and a pidfd. */
#include "probe.h"

#include <signal.h>

int main(int argc, char **argv) {
  probe_args(argc, 1, "kill_decoy PID");
  pid_t pid = (pid_t)atoi(argv[1]);
  int escaped = probe_try("kill SIGTERM", kill(pid, SIGTERM));
  int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
  if (probe_try("pidfd_open", pidfd)) {
    escaped |= probe_try("pidfd_send_signal SIGTERM", syscall(SYS_pidfd_send_signal, pidfd, SIGTERM, NULL, 0));
  }
  return probe_verdict(escaped);
}
