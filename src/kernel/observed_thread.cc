#include "kernel/observed_thread.h"

#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <mutex>
#include <vector>

#include "base/unique_fd.h"

namespace corral {
namespace {

#if defined(__x86_64__)
constexpr uint32_t kNativeArch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
constexpr uint32_t kNativeArch = AUDIT_ARCH_AARCH64;
#else
constexpr uint32_t kNativeArch = 0;  // Start fails: no architecture to check against
#endif

// Calls that name no file and list no directory: they run unseen.
const std::vector<long>& UnseenCalls() {
  static const std::vector<long> calls = {
      SYS_read, SYS_write, SYS_readv, SYS_writev, SYS_pread64, SYS_close, SYS_lseek, SYS_mmap, SYS_munmap,
      SYS_mprotect, SYS_mremap, SYS_madvise, SYS_brk, SYS_futex, SYS_rt_sigprocmask, SYS_rt_sigaction,
      SYS_rt_sigreturn, SYS_sigaltstack, SYS_getpid, SYS_gettid, SYS_getuid, SYS_geteuid, SYS_getgid,
      SYS_getegid, SYS_getppid, SYS_clock_gettime, SYS_clock_getres, SYS_gettimeofday, SYS_nanosleep,
      SYS_clock_nanosleep, SYS_sched_yield, SYS_sched_getaffinity, SYS_exit, SYS_exit_group,
      SYS_restart_syscall, SYS_getrandom, SYS_rseq, SYS_set_robust_list, SYS_membarrier, SYS_fcntl, SYS_dup,
      SYS_dup3, SYS_uname, SYS_prlimit64, SYS_inotify_init1, SYS_eventfd2, SYS_pipe2, SYS_ppoll,
#ifdef SYS_poll
      SYS_poll,
#endif
#ifdef SYS_time
      SYS_time,
#endif
#ifdef SYS_getrlimit
      SYS_getrlimit,
#endif
#ifdef SYS_landlock_create_ruleset
      SYS_landlock_create_ruleset,
#endif
  };
  return calls;
}

// The thread's filter: a foreign architecture or a call not in UnseenCalls
// waits for the observer.
std::vector<sock_filter> ObservedFilter() {
  std::vector<sock_filter> program;
  program.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)));
  program.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, kNativeArch, 1, 0));
  program.push_back(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF));
  program.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)));
  for (long nr : UnseenCalls()) {
    program.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, static_cast<uint32_t>(nr), 0, 1));
    program.push_back(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
  }
  program.push_back(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF));
  return program;
}

std::string TextAt(uint64_t address) {
  if (address == 0) return {};
  const char* text = reinterpret_cast<const char*>(address);  // this process's memory; the caller waits
  return std::string(text, ::strnlen(text, PATH_MAX));
}

ObservedCall Lookup(const char* name, uint64_t dirfd, uint64_t path, ObservedCall::Last last) {
  ObservedCall call;
  call.kind = ObservedCall::Kind::kLookup;
  call.dirfd = static_cast<int>(dirfd);
  call.path = TextAt(path);
  call.last = last;
  call.name = name;
  return call;
}

ObservedCall OnDescriptor(const char* name, ObservedCall::Kind kind, uint64_t fd) {
  ObservedCall call;
  call.kind = kind;
  call.dirfd = static_cast<int>(fd);
  call.name = name;
  return call;
}

ObservedCall::Last LastOf(bool follows) { return follows ? ObservedCall::Last::kFollowed : ObservedCall::Last::kNotFollowed; }

// A *at call with flags: an empty path with AT_EMPTY_PATH is the descriptor itself.
ObservedCall AtCall(const char* name, uint64_t dirfd, uint64_t path, uint64_t flags) {
  if ((flags & AT_EMPTY_PATH) != 0 && TextAt(path).empty()) {
    return OnDescriptor(name, ObservedCall::Kind::kInode, dirfd);
  }
  return Lookup(name, dirfd, path, LastOf((flags & AT_SYMLINK_NOFOLLOW) == 0));
}

ObservedCall Decode(const seccomp_data& data) {
  const auto& a = data.args;
  if (data.arch != kNativeArch) {
    ObservedCall other;
    other.name = "a call of a foreign architecture";
    return other;
  }
  switch (data.nr) {
#ifdef SYS_open
    case SYS_open: return Lookup("open", static_cast<uint64_t>(AT_FDCWD), a[0], LastOf((a[1] & O_NOFOLLOW) == 0));
#endif
    case SYS_openat: return Lookup("openat", a[0], a[1], LastOf((a[2] & O_NOFOLLOW) == 0));
    case SYS_openat2: {
      open_how how{};
      if (a[2] != 0 && a[3] >= sizeof(how)) ::memcpy(&how, reinterpret_cast<const void*>(a[2]), sizeof(how));
      if ((how.resolve & RESOLVE_IN_ROOT) != 0) break;  // "/" means the directory: not decoded
      return Lookup("openat2", a[0], a[1], LastOf((how.flags & O_NOFOLLOW) == 0));
    }
#ifdef SYS_stat
    case SYS_stat: return Lookup("stat", static_cast<uint64_t>(AT_FDCWD), a[0], ObservedCall::Last::kFollowed);
    case SYS_lstat: return Lookup("lstat", static_cast<uint64_t>(AT_FDCWD), a[0], ObservedCall::Last::kNotFollowed);
#endif
#ifdef SYS_newfstatat
    case SYS_newfstatat: return AtCall("newfstatat", a[0], a[1], a[3]);
#endif
    case SYS_statx: return AtCall("statx", a[0], a[1], a[2]);
    case SYS_fstat: return OnDescriptor("fstat", ObservedCall::Kind::kInode, a[0]);
    case SYS_fstatfs: return OnDescriptor("fstatfs", ObservedCall::Kind::kInode, a[0]);
    case SYS_statfs: return Lookup("statfs", static_cast<uint64_t>(AT_FDCWD), a[0], ObservedCall::Last::kFollowed);
#ifdef SYS_access
    case SYS_access: return Lookup("access", static_cast<uint64_t>(AT_FDCWD), a[0], ObservedCall::Last::kFollowed);
#endif
    case SYS_faccessat: return Lookup("faccessat", a[0], a[1], ObservedCall::Last::kFollowed);
#ifdef SYS_faccessat2
    case SYS_faccessat2: return AtCall("faccessat2", a[0], a[1], a[3]);
#endif
#ifdef SYS_readlink
    case SYS_readlink: return Lookup("readlink", static_cast<uint64_t>(AT_FDCWD), a[0], ObservedCall::Last::kNotFollowed);
#endif
    case SYS_readlinkat:
      if (TextAt(a[1]).empty()) return OnDescriptor("readlinkat", ObservedCall::Kind::kInode, a[0]);
      return Lookup("readlinkat", a[0], a[1], ObservedCall::Last::kNotFollowed);
    case SYS_getdents64: return OnDescriptor("getdents64", ObservedCall::Kind::kListing, a[0]);
#ifdef SYS_getdents
    case SYS_getdents: return OnDescriptor("getdents", ObservedCall::Kind::kListing, a[0]);
#endif
    case SYS_inotify_add_watch:
      return Lookup("inotify_add_watch", static_cast<uint64_t>(AT_FDCWD), a[1], LastOf((a[2] & IN_DONT_FOLLOW) == 0));
    default: break;
  }
  ObservedCall other;
  other.name = "system call " + std::to_string(data.nr);
  return other;
}

}  // namespace

struct ObservedThread::Shared {
  pthread_t thread{};
  UniqueFd listener;
  UniqueFd done;  // eventfd: the thread finished a piece of work
  std::mutex run_mutex;  // one Run at a time
  std::mutex mutex;
  std::condition_variable changed;
  const std::function<void()>* work = nullptr;
  bool stop = false;
  std::exception_ptr thrown;
  // Start's answer: the listener, or -errno.
  int started = 0;
  bool answered = false;
};

namespace {

void* ThreadMain(void* argument) {
  auto* shared = static_cast<ObservedThread::Shared*>(argument);
  sigset_t all;
  ::sigfillset(&all);
  ::pthread_sigmask(SIG_BLOCK, &all, nullptr);
  std::vector<sock_filter> filter = ObservedFilter();
  sock_fprog program{static_cast<unsigned short>(filter.size()), filter.data()};
  int listener = -EINVAL;
  if (kNativeArch == 0) {
    listener = -ENOSYS;
  } else if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {  // this thread's alone
    listener = -errno;
  } else {
    // No SECCOMP_FILTER_FLAG_TSYNC: the filter is this thread's alone.
    long fd = ::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &program);
    listener = fd >= 0 ? static_cast<int>(fd) : -errno;
  }
  {
    std::lock_guard lock(shared->mutex);
    shared->started = listener;
    shared->answered = true;
  }
  shared->changed.notify_all();
  if (listener < 0) return nullptr;
  for (;;) {
    std::unique_lock lock(shared->mutex);
    shared->changed.wait(lock, [shared] { return shared->stop || shared->work != nullptr; });
    if (shared->stop) return nullptr;
    const std::function<void()>* work = shared->work;
    shared->work = nullptr;
    lock.unlock();
    std::exception_ptr thrown;
    try {
      (*work)();
    } catch (...) {
      thrown = std::current_exception();
    }
    lock.lock();
    shared->thrown = thrown;
    lock.unlock();
    uint64_t one = 1;
    (void)!::write(shared->done.get(), &one, sizeof(one));
  }
}

struct NotifySizes {
  size_t notif = sizeof(seccomp_notif);
  size_t resp = sizeof(seccomp_notif_resp);
};

NotifySizes KernelNotifySizes() {
  seccomp_notif_sizes sizes{};
  NotifySizes out;
  if (::syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sizes) == 0) {
    out.notif = std::max<size_t>(out.notif, sizes.seccomp_notif);
    out.resp = std::max<size_t>(out.resp, sizes.seccomp_notif_resp);
  }
  return out;
}

// Answers one waiting call of the thread: `observe` sees it, then it runs.
void AnswerOne(int listener, const NotifySizes& sizes, const std::function<void(const ObservedCall&)>& observe,
               std::exception_ptr& thrown) {
  std::vector<uint64_t> request((sizes.notif + 7) / 8, 0);
  auto* notif = reinterpret_cast<seccomp_notif*>(request.data());
  if (::ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, notif) != 0) return;  // interrupted: it comes again
  try {
    observe(Decode(notif->data));
  } catch (...) {
    if (!thrown) thrown = std::current_exception();
  }
  std::vector<uint64_t> response((sizes.resp + 7) / 8, 0);
  auto* resp = reinterpret_cast<seccomp_notif_resp*>(response.data());
  resp->id = notif->id;
  resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
  (void)::ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, resp);
}

}  // namespace

ObservedThread::ObservedThread(std::unique_ptr<Shared> shared) : shared_(std::move(shared)) {}

Result<std::unique_ptr<ObservedThread>> ObservedThread::Start() {
  auto shared = std::make_unique<Shared>();
  shared->done.Reset(::eventfd(0, EFD_CLOEXEC));
  if (!shared->done) return Error::FromErrno(ErrorKind::kInternal, "cannot make the observed thread's eventfd", "eventfd", errno);
  if (int rc = ::pthread_create(&shared->thread, nullptr, ThreadMain, shared.get()); rc != 0) {
    return Error::FromErrno(ErrorKind::kInternal, "cannot start the observed thread", "pthread_create", rc);
  }
  int started;
  {
    std::unique_lock lock(shared->mutex);
    shared->changed.wait(lock, [&] { return shared->answered; });
    started = shared->started;
  }
  if (started < 0) {
    ::pthread_join(shared->thread, nullptr);
    return Error::FromErrno(ErrorKind::kUnsupported,
                            "cannot stop a thread's calls for another to see (seccomp user notification: Linux 5.5, "
                            "and no notifying filter of the process's own)",
                            "seccomp", -started);
  }
  shared->listener.Reset(started);
  return std::unique_ptr<ObservedThread>(new ObservedThread(std::move(shared)));
}

ObservedThread::~ObservedThread() {
  std::lock_guard run(shared_->run_mutex);
  {
    std::lock_guard lock(shared_->mutex);
    shared_->stop = true;
  }
  shared_->changed.notify_all();
  // The thread's way out may make calls of its own: they are answered
  // (and run) until it has gone.
  static const NotifySizes sizes = KernelNotifySizes();
  std::exception_ptr ignored;
  auto nothing = [](const ObservedCall&) {};
  while (::pthread_tryjoin_np(shared_->thread, nullptr) == EBUSY) {
    pollfd wait{shared_->listener.get(), POLLIN, 0};
    if (::poll(&wait, 1, 1) > 0 && (wait.revents & POLLIN) != 0) AnswerOne(shared_->listener.get(), sizes, nothing, ignored);
  }
}

bool ObservedThread::Run(const std::function<void()>& work, const std::function<void(const ObservedCall&)>& observe,
                         IfBusy if_busy) {
  static const NotifySizes sizes = KernelNotifySizes();
  std::unique_lock run(shared_->run_mutex, std::defer_lock);
  if (if_busy == IfBusy::kReturn) {
    if (!run.try_lock()) return false;
  } else {
    run.lock();
  }
  {
    std::lock_guard lock(shared_->mutex);
    shared_->work = &work;
    shared_->thrown = nullptr;
  }
  shared_->changed.notify_all();
  std::exception_ptr observer_threw;
  for (;;) {
    pollfd waits[2] = {{shared_->listener.get(), POLLIN, 0}, {shared_->done.get(), POLLIN, 0}};
    if (::poll(waits, 2, -1) < 0) continue;  // EINTR
    // A call waiting is answered first: the thread is not done until it is.
    if ((waits[0].revents & POLLIN) != 0) {
      AnswerOne(shared_->listener.get(), sizes, observe, observer_threw);
      continue;
    }
    if ((waits[1].revents & POLLIN) != 0) {
      uint64_t count;
      (void)!::read(shared_->done.get(), &count, sizeof(count));
      break;
    }
  }
  std::exception_ptr thrown;
  {
    std::lock_guard lock(shared_->mutex);
    thrown = shared_->thrown;
  }
  if (thrown) std::rethrow_exception(thrown);
  if (observer_threw) std::rethrow_exception(observer_threw);
  return true;
}

}  // namespace corral
