#include "exec/nursery.h"

#include <fcntl.h>
#include <linux/futex.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <new>

#include "base/blocked_signals.h"
#include "base/cpu_relax.h"
#include "exec/child.h"
#include "kernel/kernel_abi.h"
#include "kernel/namespaces.h"

namespace corral {
namespace {

// System calls that return -errno and never write errno: the helper shares
// corral's thread-local storage, so glibc's wrappers would write the
// errno of corral's running thread.
#if defined(__x86_64__)
constexpr bool kRawSyscalls = true;
long RawSyscall(long number, long a = 0, long b = 0, long c = 0, long d = 0, long e = 0) {
  register long r10 asm("r10") = d;
  register long r8 asm("r8") = e;
  long result;
  asm volatile("syscall"
               : "=a"(result)
               : "a"(number), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8)
               : "rcx", "r11", "memory");
  return result;
}
#elif defined(__aarch64__)
constexpr bool kRawSyscalls = true;
long RawSyscall(long number, long a = 0, long b = 0, long c = 0, long d = 0, long e = 0) {
  register long x8 asm("x8") = number;
  register long x0 asm("x0") = a;
  register long x1 asm("x1") = b;
  register long x2 asm("x2") = c;
  register long x3 asm("x3") = d;
  register long x4 asm("x4") = e;
  asm volatile("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4) : "memory");
  return x0;
}
#else
constexpr bool kRawSyscalls = false;
long RawSyscall(long, long = 0, long = 0, long = 0, long = 0, long = 0) { return -ENOSYS; }
#endif

// The futex word's values. kGone is what the kernel writes there when the
// helper is gone (CLONE_CHILD_CLEARTID), and it wakes whoever waits on it.
enum State : int {
  kGone = 0,
  kStarting = 1,  // the helper is unsharing
  kReady = 2,     // it holds the namespaces and sleeps until roused
  kFailed = 3,    // the namespaces were refused; the helper exits
  kRoused = 4,    // a spawn is near: the helper spins, so the go costs no wake-up
  kGo = 5,        // corral's request is in place
  kQuit = 6,      // dismissed
  kAnswered = 7,  // the helper tried the clone; its result is in place
};

// About a millisecond of spinning (a pause is some 40 to 140 cycles) before
// either side sleeps on the futex instead: a spawn's last steps after the
// rousing, or the helper's clone, take a fraction of that.
constexpr int kSpins = 20000;

constexpr size_t kPage = 4096;
// Init runs on a copy of this stack for its whole life.
constexpr size_t kStackSize = 1024 * 1024;

int Load(const int* word) { return __atomic_load_n(word, __ATOMIC_SEQ_CST); }
bool Swap(int* word, int from, int to) {
  return __atomic_compare_exchange_n(word, &from, to, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
}
void Wait(int* word, int value) {
  RawSyscall(SYS_futex, reinterpret_cast<long>(word), FUTEX_WAIT, value, 0, 0);
}
void Wake(int* word) { RawSyscall(SYS_futex, reinterpret_cast<long>(word), FUTEX_WAKE, 1, 0, 0); }

}  // namespace

struct Nursery::Shared {
  int state = kStarting;  // the futex word; also the helper's CLONE_CHILD_CLEARTID word
  pid_t parent = 0;       // corral, to notice it died before PR_SET_PDEATHSIG held
  cpu_set_t cpus = {};    // corral's CPUs: init may run on all of them
  cpu_set_t others = {};  // those but the one corral started the helper on: the helper's own
  IdMaps id_maps;         // corral's uid and gid, mapped to themselves
  long uid_map_length = 0;
  long gid_map_length = 0;
  // The request, in place before kGo.
  const ChildContext* ctx = nullptr;
  uint64_t mask = 0;  // init's signal mask, as the kernel's sigset
  // The result. The kernel writes init's pid and pidfd here during the
  // clone (CLONE_PARENT_SETTID, CLONE_PIDFD), before init runs and before
  // the helper could die of anything: an init that exists is never lost.
  pid_t pid = 0;
  int pidfd = -1;
};

namespace {

// Writes `length` bytes of `data` to the procfs file `path`; 0 or a
// positive errno. The lengths come from corral: a length loop here would
// become a call to strlen through the PLT, and the helper must never enter
// the dynamic loader (which could write errno or take its lock).
int WriteProcFile(const char* path, const char* data, long length) {
  long fd = RawSyscall(SYS_openat, AT_FDCWD, reinterpret_cast<long>(path), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return static_cast<int>(-fd);
  long written = RawSyscall(SYS_write, fd, reinterpret_cast<long>(data), length);
  RawSyscall(SYS_close, fd);
  return written == length ? 0 : written < 0 ? static_cast<int>(-written) : EIO;
}

// lo of the new network namespace, up (init finds it so, and leaves it).
bool BringUpLoopback() {
  long fd = RawSyscall(SYS_socket, AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  struct ifreq request;  // written by hand: `= {}` could become a call to memset
  for (char& c : request.ifr_name) c = '\0';
  request.ifr_name[0] = 'l';
  request.ifr_name[1] = 'o';
  request.ifr_flags = 0;
  bool up = RawSyscall(SYS_ioctl, fd, SIOCGIFFLAGS, reinterpret_cast<long>(&request)) == 0;
  if (up && (request.ifr_flags & IFF_UP) == 0) {
    request.ifr_flags = static_cast<short>(request.ifr_flags | IFF_UP);
    up = RawSyscall(SYS_ioctl, fd, SIOCSIFFLAGS, reinterpret_cast<long>(&request)) == 0;
  }
  RawSyscall(SYS_close, fd);
  return up;
}

// The namespaces, the id maps, the hostname and lo, as init's first steps
// would make them (exec/child.cc); true when all of them held.
bool MakeNamespaces(const Nursery::Shared& shared) {
  if (RawSyscall(SYS_unshare, static_cast<long>(Nursery::kNamespaces)) != 0) return false;
  static constexpr char kDeny[] = "deny";
  if (int e = WriteProcFile("/proc/self/setgroups", kDeny, sizeof kDeny - 1); e != 0 && e != ENOENT) return false;
  if (WriteProcFile("/proc/self/uid_map", shared.id_maps.uid_map, shared.uid_map_length) != 0) return false;
  if (WriteProcFile("/proc/self/gid_map", shared.id_maps.gid_map, shared.gid_map_length) != 0) return false;
  if (RawSyscall(SYS_sethostname, reinterpret_cast<long>(kSandboxHostname), sizeof kSandboxHostname - 1) != 0) {
    return false;
  }
  return BringUpLoopback();
}

int Helper(void* arg) {
  auto* shared = static_cast<Nursery::Shared*>(arg);
  // Off corral's CPU before anything else. A new task is queued on its
  // parent's CPU, and one that preempts corral there would make the
  // namespaces (most of a millisecond) while corral waits, with the other
  // CPU idle; moved now, it costs corral a few microseconds.
  RawSyscall(SYS_sched_setaffinity, 0, sizeof shared->others, reinterpret_cast<long>(&shared->others));
  RawSyscall(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL);
  if (RawSyscall(SYS_getppid) != shared->parent) return 0;
  const bool held = MakeNamespaces(*shared);
  if (!Swap(&shared->state, kStarting, held ? kReady : kFailed)) return 0;  // dismissed meanwhile
  Wake(&shared->state);
  if (!held) return 0;
  int state;
  int spins = 0;
  while ((state = Load(&shared->state)) == kReady || state == kRoused) {
    if (state == kRoused && ++spins < kSpins) {
      CpuRelax();
    } else {
      Wait(&shared->state, state);
    }
  }
  if (state != kGo) return 0;
  // Init may run on every CPU corral may.
  RawSyscall(SYS_sched_setaffinity, 0, sizeof shared->cpus, reinterpret_cast<long>(&shared->cpus));
  // Like fork: no stack of its own (a copy of this one), and the helper's
  // exit signal (SIGCHLD), which CLONE_PARENT passes on. The arguments are
  // written field by field: `= {}` could become a call to memset.
  kabi::CloneArgs args;
  args.flags = CLONE_PARENT | CLONE_PARENT_SETTID | kabi::kClonePidfd;
  args.pidfd = reinterpret_cast<uint64_t>(&shared->pidfd);
  args.child_tid = 0;
  args.parent_tid = reinterpret_cast<uint64_t>(&shared->pid);
  args.exit_signal = 0;
  args.stack = 0;
  args.stack_size = 0;
  args.tls = 0;
  args.set_tid = 0;
  args.set_tid_size = 0;
  args.cgroup = 0;
  long pid = RawSyscall(SYS_clone3, reinterpret_cast<long>(&args), sizeof args);
  if (pid == 0) {
    // Init, in a copy of corral's memory of its own, with the signal mask
    // corral had at the spawn (the helper keeps every signal blocked).
    RawSyscall(SYS_rt_sigprocmask, SIG_SETMASK, reinterpret_cast<long>(&shared->mask), 0, sizeof shared->mask);
    RunSandboxed(*shared->ctx);
  }
  __atomic_store_n(&shared->state, kAnswered, __ATOMIC_SEQ_CST);
  Wake(&shared->state);
  return 0;
}

}  // namespace

std::unique_ptr<Nursery> Nursery::Start() {
  if (!kRawSyscalls) return nullptr;
  // [control block][guard page][stack]: the stack grows down to the guard.
  const size_t size = 2 * kPage + kStackSize;
  void* region = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK | MAP_NORESERVE,
                        -1, 0);
  if (region == MAP_FAILED) return nullptr;
  if (::mprotect(static_cast<char*>(region) + kPage, kPage, PROT_NONE) != 0) {
    ::munmap(region, size);
    return nullptr;
  }
  std::unique_ptr<Nursery> nursery(new Nursery());
  Shared* shared = new (region) Shared();
  nursery->shared_ = shared;
  shared->parent = ::getpid();
  shared->id_maps = MakeIdMaps(::getuid(), ::getgid());
  shared->uid_map_length = static_cast<long>(std::strlen(shared->id_maps.uid_map));
  shared->gid_map_length = static_cast<long>(std::strlen(shared->id_maps.gid_map));
  // One CPU: the helper would only take turns with corral.
  if (::sched_getaffinity(0, sizeof shared->cpus, &shared->cpus) != 0 || CPU_COUNT(&shared->cpus) < 2) {
    nursery->shared_ = nullptr;
    ::munmap(region, size);
    return nullptr;
  }
  shared->others = shared->cpus;
  if (int here = ::sched_getcpu(); here >= 0 && here < CPU_SETSIZE) CPU_CLR(here, &shared->others);
  // The helper starts, and stays, with every signal blocked: corral's
  // handlers must never run on its stack.
  pid_t helper;
  {
    BlockedSignals held(BlockedSignals::kAll);
    helper = ::clone(Helper, static_cast<char*>(region) + size, CLONE_VM | CLONE_FILES | CLONE_CHILD_CLEARTID | SIGCHLD,
                     nursery->shared_, nullptr, nullptr, &nursery->shared_->state);
  }
  if (helper < 0) {
    nursery->shared_ = nullptr;
    ::munmap(region, size);
    return nullptr;
  }
  nursery->helper_ = helper;
  nursery->KeepOffThisCpu();
  return nursery;
}

Nursery::~Nursery() {
  Dismiss();
  if (shared_ != nullptr) ::munmap(shared_, 2 * kPage + kStackSize);
}

void Nursery::Reap() {
  if (helper_ <= 0) return;
  int status;
  // It exits within microseconds of its answer: poll briefly before
  // sleeping, which would wait for this CPU to be woken.
  for (int polls = 0; polls < kSpins / 20; ++polls) {
    pid_t reaped = ::waitpid(helper_, &status, WNOHANG | __WALL);
    if (reaped == helper_ || (reaped < 0 && errno != EINTR)) {
      helper_ = -1;
      return;
    }
    CpuRelax();
  }
  while (::waitpid(helper_, &status, __WALL) < 0 && errno == EINTR) {
  }
  helper_ = -1;
}

void Nursery::Dismiss() {
  spent_ = true;
  if (helper_ <= 0) return;
  int state = Load(&shared_->state);
  while ((state == kStarting || state == kReady || state == kRoused) && !Swap(&shared_->state, state, kQuit)) {
    state = Load(&shared_->state);
  }
  Wake(&shared_->state);
  Reap();
}

const IdMaps& Nursery::id_maps() const { return shared_->id_maps; }

void Nursery::KeepOffThisCpu() {
  cpu_set_t others = shared_->cpus;
  int here = ::sched_getcpu();
  if (here >= 0 && here < CPU_SETSIZE) CPU_CLR(here, &others);
  if (CPU_COUNT(&others) > 0) (void)::sched_setaffinity(helper_, sizeof others, &others);
}

void Nursery::Rouse() {
  if (spent_ || helper_ <= 0 || Load(&shared_->state) != kReady) return;
  KeepOffThisCpu();
  if (Swap(&shared_->state, kReady, kRoused)) Wake(&shared_->state);
}

std::optional<Nursery::Born> Nursery::CloneInit(const ChildContext& ctx, const sigset_t& mask) {
  if (spent_ || helper_ <= 0) {
    Dismiss();
    return std::nullopt;
  }
  spent_ = true;
  int state;
  while ((state = Load(&shared_->state)) == kStarting) Wait(&shared_->state, kStarting);
  shared_->ctx = &ctx;
  static_assert(sizeof(sigset_t) >= sizeof(uint64_t));
  std::memcpy(&shared_->mask, &mask, sizeof shared_->mask);
  if ((state != kReady && state != kRoused) || !Swap(&shared_->state, state, kGo)) {
    Dismiss();  // refused, or gone: clone as before
    return std::nullopt;
  }
  Wake(&shared_->state);
  // The answer comes within the clone's time: spin for it, then sleep. The
  // helper's death (kGone) ends the wait too.
  for (int spins = 0; (state = Load(&shared_->state)) == kGo;) {
    if (++spins < kSpins) {
      CpuRelax();
    } else {
      Wait(&shared_->state, kGo);
    }
  }
  // Reaped now: a zombie of the sandbox's user namespace would count
  // against the command's RLIMIT_NPROC (--max-procs) for the whole run.
  Reap();
  const pid_t pid = __atomic_load_n(&shared_->pid, __ATOMIC_SEQ_CST);
  if (pid > 0) return Born{pid, shared_->pidfd};
  // No init: the clone was refused (clone3 may be, by a container's
  // seccomp profile), or the helper died before it. Clone as before.
  return std::nullopt;
}

}  // namespace corral
