/* Makes denied calls with arguments the kernel rejects before it checks any
 * privilege (a MISSING path, a bad descriptor, bad flags, no such process), so
 * that without seccomp none of them fails with EPERM. Prints one line per
 * call, "LABEL ERRNO" (0 when the call succeeded), for the test to judge. */
#include "probe.h"

#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/wait.h>

#define KEY_SPEC_SESSION_KEYRING (-3)
#define UFFD_USER_MODE_ONLY 1
#define BAD_FLAG 0x40000000UL
#define NO_SUCH_PID 0x3fffffff /* above any pid_max */
#define BAD_SOCKET_TYPE 15     /* above SOCK_MAX */
#define BAD_PROTOCOL 300       /* above IPPROTO_MAX: EINVAL before the CAP_NET_RAW check */
#define SYS_OPEN_TREE_ATTR 467 /* Linux 6.15, x86-64 and the generic table */

static int escaped;

static void report(const char *label, long rc) {
  printf("%s %d\n", label, rc < 0 ? errno : 0);
  if (rc >= 0) escaped = 1;
}

int main(int argc, char **argv) {
  probe_args(argc, 1, "seccomp_errno MISSING");
  const char *missing = argv[1];
  struct {
    struct file_handle head;
    unsigned char bytes[128];
  } handle = {.head.handle_bytes = 128};
  int mount_id = 0;

  report("ptrace", syscall(SYS_ptrace, PTRACE_ATTACH, NO_SUCH_PID, 0, 0));
  report("process_vm_readv", syscall(SYS_process_vm_readv, getpid(), NULL, 0, NULL, 0, 1UL));
  report("process_vm_writev", syscall(SYS_process_vm_writev, getpid(), NULL, 0, NULL, 0, 1UL));
  report("mount", mount(NULL, missing, "tmpfs", 0, NULL));
  report("umount2", syscall(SYS_umount2, "/", BAD_FLAG));
  report("open_tree", syscall(SYS_open_tree, AT_FDCWD, missing, 0));
  report("open_tree_attr", syscall(SYS_OPEN_TREE_ATTR, AT_FDCWD, missing, 0UL, NULL, 0UL));
  report("mount_setattr", syscall(SYS_mount_setattr, AT_FDCWD, "/", BAD_FLAG, NULL, 0));
  report("fsconfig", syscall(SYS_fsconfig, -1, 0, NULL, NULL, 0));
  report("chroot", chroot(missing));
  report("setns", setns(-1, 0));
  report("unshare(CLONE_NEWUSER)", syscall(SYS_unshare, CLONE_NEWUSER | 1UL));
  long pid = syscall(SYS_clone, CLONE_NEWUSER | CLONE_FS | SIGCHLD, 0, 0, 0, 0);
  if (pid == 0) _exit(0);
  if (pid > 0) waitpid((pid_t)pid, NULL, 0);
  report("clone(CLONE_NEWUSER)", pid);
  report("keyctl", syscall(SYS_keyctl, 0x7fffffffL, 0, 0, 0, 0));
  report("add_key", syscall(SYS_add_key, NULL, "corral", NULL, 0, KEY_SPEC_SESSION_KEYRING));
  report("request_key", syscall(SYS_request_key, NULL, "corral", NULL, 0));
  report("perf_event_open", syscall(SYS_perf_event_open, NULL, 0, -1, -1, ~0UL));
  report("userfaultfd", syscall(SYS_userfaultfd, UFFD_USER_MODE_ONLY | BAD_FLAG));
  report("io_uring_enter", syscall(SYS_io_uring_enter, -2, 0, 0, 0, NULL, 0));
  report("io_uring_register", syscall(SYS_io_uring_register, -2, 0, NULL, 0));
  report("name_to_handle_at", syscall(SYS_name_to_handle_at, AT_FDCWD, missing, &handle.head, &mount_id, 0));
  report("ioctl(TIOCSTI)", syscall(SYS_ioctl, -1, 0x5412UL, "x"));
  report("ioctl(TIOCSTI) with high bits", syscall(SYS_ioctl, -1, 0xdeadbeef00005412UL, "x"));
  report("ioctl(TIOCLINUX)", syscall(SYS_ioctl, -1, 0x541cUL, "x"));
  int n_tty = 0;
  report("ioctl(TIOCSETD)", syscall(SYS_ioctl, -1, 0x5423UL, &n_tty));
  report("ioctl(TIOCEXCL)", syscall(SYS_ioctl, -1, 0x540cUL, 0));
  report("socket(AF_INET)", socket(AF_INET, BAD_SOCKET_TYPE, 0));
  report("socket(AF_INET, SOCK_RAW)", socket(AF_INET, SOCK_RAW, BAD_PROTOCOL));
  report("socket(AF_INET6, SOCK_RAW)", socket(AF_INET6, SOCK_RAW, BAD_PROTOCOL));
  report("socket(AF_NETLINK)", socket(AF_NETLINK, BAD_SOCKET_TYPE, 0));
  report("socket(AF_PACKET)", socket(AF_PACKET, BAD_SOCKET_TYPE, 0));
  return probe_verdict(escaped);
}
