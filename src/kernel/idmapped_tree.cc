#include "kernel/idmapped_tree.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sched.h>
#include <sys/prctl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "base/blocked_signals.h"
#include "kernel/kernel_abi.h"

namespace corral {
namespace {

constexpr ErrorKind kKind = ErrorKind::kNamespace;

// The holder of the mapping's user namespace: it only waits to be killed,
// in corral's memory (CLONE_VM, so nothing is copied) on a stack its caller
// lends it, touching nothing else. Raw system calls only: it shares the
// calling thread's errno. If the thread that made it dies first (corral
// killed meanwhile), so does the holder.
int Hold(void* parent) {
  ::syscall(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  if (::syscall(SYS_getppid) != *static_cast<pid_t*>(parent)) ::syscall(SYS_exit, 0);
  for (;;) ::syscall(SYS_pause);
}

int WriteAt(int dir, const char* name, const char* text) {
  int fd = ::openat(dir, name, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return errno;
  size_t length = std::strlen(text);
  int err = ::write(fd, text, length) == static_cast<ssize_t>(length) ? 0 : (errno != 0 ? errno : EIO);
  ::close(fd);
  return err;
}

// A user namespace mapping id 0 (uid and gid) onto 65534 and nothing else.
Result<UniqueFd> RootlessUserNamespace() {
  // On this thread's own stack, for the holder's short life (it is killed
  // and reaped before this returns): safe from any number of threads.
  alignas(16) char stack[8192];
  pid_t self = ::getpid();
  // A signal to this thread that would end corral waits until the holder
  // is reaped: it would otherwise be left to the caller's reaper. (In a
  // process of many threads another thread may take it; the holder then
  // dies with corral through PR_SET_PDEATHSIG, as before.)
  sigset_t ending;
  ::sigemptyset(&ending);
  for (int signal : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) ::sigaddset(&ending, signal);
  BlockedSignals held(ending);
  pid_t pid = ::clone(Hold, stack + sizeof stack, CLONE_NEWUSER | CLONE_VM | SIGCHLD, &self);
  if (pid < 0) return Error::FromErrno(kKind, "cannot create the user namespace of /etc's idmapped view", "clone", errno);
  char path[32];
  std::snprintf(path, sizeof path, "/proc/%d", static_cast<int>(pid));
  UniqueFd dir(::open(path, O_PATH | O_DIRECTORY | O_CLOEXEC));
  int err = dir.get() < 0 ? errno : 0;
  if (err == 0) err = WriteAt(dir.get(), "uid_map", "0 65534 1\n");
  if (err == 0) err = WriteAt(dir.get(), "gid_map", "0 65534 1\n");
  UniqueFd ns(err == 0 ? ::openat(dir.get(), "ns/user", O_RDONLY | O_CLOEXEC) : -1);
  if (err == 0 && ns.get() < 0) err = errno;
  ::kill(pid, SIGKILL);
  while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
  }
  if (err != 0) return Error::FromErrno(kKind, "cannot map the user namespace of /etc's idmapped view", path, err);
  return ns;
}

}  // namespace

Result<UniqueFd> OpenTreeSeenAsOthers(const char* path, const FileIdentity& pin, uint64_t attrs) {
  struct open_how how = {};
  how.flags = O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
  how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  UniqueFd source(static_cast<int>(::syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof how)));
  if (source.get() < 0) return Error::FromErrno(kKind, "cannot open a tree to idmap", path, errno);
  struct stat st;
  if (::fstat(source.get(), &st) != 0) return Error::FromErrno(kKind, "cannot open a tree to idmap", path, errno);
  if (st.st_dev != pin.dev || st.st_ino != pin.ino) {
    return Error(kKind, std::string(path) + " changed since the policy was built");
  }
  CORRAL_ASSIGN_OR_RETURN(UniqueFd ns, RootlessUserNamespace());
  UniqueFd tree(static_cast<int>(::syscall(SYS_open_tree, source.get(), "",
                                           kabi::kOpenTreeClone | kabi::kOpenTreeCloexec | AT_EMPTY_PATH | AT_RECURSIVE)));
  if (tree.get() < 0) return Error::FromErrno(kKind, "cannot clone a tree to idmap", path, errno);
  kabi::MountAttr attr = {kabi::kMountAttrIdmap | attrs, 0, 0, static_cast<uint64_t>(ns.get())};
  if (::syscall(SYS_mount_setattr, tree.get(), "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof attr) != 0) {
    return Error::FromErrno(kKind, "cannot idmap", path, errno);
  }
  return tree;
}

}  // namespace corral
