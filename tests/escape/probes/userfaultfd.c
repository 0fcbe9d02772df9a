/* Creates a userfaultfd, by syscall and through /dev/userfaultfd. */
#include "probe.h"

int main(void) {
  int escaped = probe_try("userfaultfd(UFFD_USER_MODE_ONLY)", syscall(SYS_userfaultfd, O_CLOEXEC | 1));
  escaped |= probe_try("userfaultfd(0)", syscall(SYS_userfaultfd, O_CLOEXEC));
  escaped |= probe_try("open /dev/userfaultfd", open("/dev/userfaultfd", O_RDWR | O_CLOEXEC));
  return probe_verdict(escaped);
}
