// A nursery: the sandbox's slowest namespaces, made on another core while
// corral is still deriving the policy.
//
// A cold `corral run` spent about a tenth of its time in one clone(2): a
// new network namespace alone costs the kernel about half a millisecond. None of it
// depends on the policy. Nursery::Start clones a helper that shares
// corral's memory and descriptor table (CLONE_VM | CLONE_FILES: no page is
// copied, nothing is passed); the helper unshares the user, mount, PID,
// IPC, UTS, cgroup and network namespaces, writes the id maps, sets the
// hostname and brings lo up (init's first steps, exec/child.h), then
// sleeps on a futex. When Spawn has the context of
// a run whose plan wants exactly those namespaces, id maps and lo (Spawn
// checks; anything else, and the helper is dismissed and Spawn clones as it
// always did), the helper clones the sandbox's init into them with
// CLONE_PARENT: init is corral's child, as before, with a copy of corral's
// memory and descriptors taken at that moment, as before, and the first
// process of the new PID namespace, as before. What a task keeps apart from
// its memory and descriptors (signal actions, rlimits, the working
// directory, the process group, the mount table it copies) init takes from
// the helper, as they were when the nursery started; corral changes none
// of them in between. Everything init does from there on is unchanged
// (exec/child.h) but the id maps and the hostname, and so is every check of
// the plan.
//
// What the helper is and is not:
//   - It runs corral's own code only, never a command, and only raw
//     system calls (unshare, the id map files, sethostname, an ioctl on a
//     socket of its own namespace, futex, clone), which leave corral's
//     errno alone: it shares corral's thread-local storage. It has every
//     signal blocked and PR_SET_PDEATHSIG, so it dies with corral. Its
//     descriptors (the id map files, that socket) live in corral's table
//     for moments, close-on-exec, before the policy exists.
//   - It holds namespaces no process of the command ever sees apart from
//     the ones init enters; its user namespace has no id map until init
//     writes one, as today.
//   - It is always reaped by corral: on use (once init is cloned), on
//     dismissal (a plan that wants other namespaces, a refused run, a run
//     that never spawns), and by the destructor. A refused run therefore
//     ends with no process of corral's left, as before.
//   - Any failure in it (namespaces refused, the helper killed) makes
//     Spawn clone as before, so the error a user sees is the one that path
//     gives.
//
// One nursery serves one spawn: the first Spawn that gets it uses or
// dismisses it. Only `corral run` makes one (a single-threaded caller whose
// PR_SET_PDEATHSIG thread lives for the run); a library caller's Spawn
// never gets one.
#pragma once

#include <sched.h>
#include <signal.h>
#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>

#include "kernel/namespaces.h"

namespace corral {

struct ChildContext;

class Nursery {
 public:
  // The namespaces a nursery holds (all of them new, owned by its new
  // user namespace).
  static constexpr uint64_t kNamespaces =
      CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP | CLONE_NEWNET;

  // Starts the helper; null where it cannot be started or would not help
  // (an architecture nursery.cc has no raw system calls for, a single CPU,
  // no memory for its stack, clone refused): Spawn then clones as it
  // always did.
  static std::unique_ptr<Nursery> Start();

  Nursery(const Nursery&) = delete;
  Nursery& operator=(const Nursery&) = delete;
  // Dismisses the helper (if still there) and reaps it.
  ~Nursery();

  // What a clone through the nursery gave.
  struct Born {
    pid_t pid = -1;
    int pidfd = -1;
  };
  // For Spawn: clones the sandbox's init into the nursery's namespaces
  // (CLONE_PARENT: corral's child; no CLONE_VM: a copy of corral's memory
  // and descriptors as they are now) and runs `RunSandboxed(ctx)` in it,
  // with `mask` as its signal mask; waits for the clone and reaps the
  // helper. The kernel writes init's pid and pidfd into memory corral
  // reads, so an init that exists is returned even when the helper was
  // killed meanwhile. nullopt when there is no init (the namespaces or
  // the clone were refused, or the helper died before it): the caller
  // clones as before. Either way the nursery is spent.
  std::optional<Born> CloneInit(const ChildContext& ctx, const sigset_t& mask);

  // A spawn is near: the helper stops sleeping and spins for a while, so
  // the go does not wait for a sleeping CPU to wake.
  void Rouse();

  // Dismisses the helper and reaps it; the nursery is spent.
  void Dismiss();

  // The id maps the helper wrote: a plan that wants others cannot use it.
  const IdMaps& id_maps() const;

  // The helper's pid while it lives (tests), else -1.
  pid_t helper() const { return helper_; }
  bool spent() const { return spent_; }

  struct Shared;

 private:
  Nursery() = default;
  // Waits until the helper is gone and reaps it.
  void Reap();
  // Pins the helper to every CPU of corral's but the one corral runs on:
  // a new task, and a task woken by corral, would otherwise queue behind
  // corral on its CPU (for up to a scheduler tick) while another CPU idles.
  // The helper's first system call pins it so too: a new task that preempts
  // corral on its CPU would make the namespaces there, with corral waiting.
  // The helper gives init every CPU back.
  void KeepOffThisCpu();

  Shared* shared_ = nullptr;  // the control block and the helper's stack (one mapping)
  pid_t helper_ = -1;
  bool spent_ = false;
};

}  // namespace corral
