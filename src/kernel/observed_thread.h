// A thread of its own whose every system call that can look up a name or
// read a directory stops before it runs, and is shown first to the thread
// that gave it the work.
//
//   CORRAL_ASSIGN_OR_RETURN(std::unique_ptr<ObservedThread> thread, ObservedThread::Start());
//   thread->Run([&] { result = BuildPolicy(host, spec); },      // on the thread
//               [&](const ObservedCall& call) { Watch(call); });  // here, before each call
//
// The thread runs under a seccomp filter (installed on it alone; no other
// thread of the process is touched) whose default is SECCOMP_RET_USER_NOTIF:
// only a short list of calls that name no file and list no directory (memory,
// futex, time, ids, read/write/close on descriptors it holds) run unseen.
// Every other call waits until Run's caller has seen it (`observe`), then
// runs as it would have (SECCOMP_USER_NOTIF_FLAG_CONTINUE). So the list of
// what `work` looked at is complete by construction: a call this file does
// not decode reaches `observe` as ObservedCall::Kind::kOther, with its name.
//
// Needs Linux 5.5 (user notification with CONTINUE); Start fails on a kernel
// without it, and the caller does without. Run calls are serialised.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "base/result.h"

namespace corral {

struct ObservedCall {
  enum class Kind {
    kLookup,   // `path` looked up from `dirfd` (AT_FDCWD, or a descriptor of this process)
    kListing,  // the directory `dirfd` is listed (getdents)
    kInode,    // what `dirfd` is (fstat, fstatfs): its own attributes
    kOther,    // a call not decoded here; `name` says which
  };
  Kind kind = Kind::kOther;
  int dirfd = -1;
  std::string path;
  // kLookup: a symlink in the last component is followed.
  enum class Last { kFollowed, kNotFollowed };
  Last last = Last::kFollowed;
  std::string name;  // the system call's name (or its number)
};

class ObservedThread {
 public:
  static Result<std::unique_ptr<ObservedThread>> Start();
  ~ObservedThread();  // stops and joins the thread
  ObservedThread(const ObservedThread&) = delete;
  ObservedThread& operator=(const ObservedThread&) = delete;

  // Runs `work` on the thread, and `observe` on this one for each call it
  // makes that can look at a name, before that call runs. Returns true when
  // `work` has returned (an exception it throws is rethrown here). While
  // another caller's work runs, kWait waits for it; kReturn returns false at
  // once and runs nothing (so a piece of work that blocks, a lookup on a
  // stuck network mount, holds up no other caller).
  enum class IfBusy { kWait, kReturn };
  bool Run(const std::function<void()>& work, const std::function<void(const ObservedCall&)>& observe,
           IfBusy if_busy = IfBusy::kWait);

  struct Shared;  // what the thread and its owner share (observed_thread.cc)

 private:
  explicit ObservedThread(std::unique_ptr<Shared> shared);
  std::unique_ptr<Shared> shared_;
};

}  // namespace corral
