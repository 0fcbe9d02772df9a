// Watches (inotify) everything a set of observed calls depended on, so a
// later caller can ask "would those calls answer the same now?" for the price
// of one read.
//
//   CORRAL_ASSIGN_OR_RETURN(NameWatch watch, NameWatch::Open());
//   thread->Run(work, [&](const ObservedCall& call) { watch.Observe(call); });
//   if (!watch.unwatchable().empty()) ...   // not all of it could be watched
//   ... later ...
//   if (!watch.Changed()) ...               // every answer would be the same
//
// Observe runs before the call does (kernel/observed_thread.h), and walks the
// lookup itself, component by component, following each symlink as the
// kernel would, adding a watch before it reads each step:
// - every directory passed through, for the one name looked up in it
//   (created, removed, renamed, its attributes or content changed), and
//   for any name made, removed or renamed in it where it folds case
//   (another spelling may answer the lookup) or its flags cannot be read;
// - what the lookup ends at: its own attributes and content (through any of
//   its links: the watch is on the inode), and for a directory the names in it;
// - a directory listed (getdents): the names in it;
// - a descriptor stat'ed: its own attributes.
// A change after the watch is in place is an event; a change before it was
// seen by the walk, which ran first. The mount table is watched too
// (/proc/self/mountinfo): inotify does not see a mount.
//
// What cannot be watched makes the whole watch worthless, and says why
// (unwatchable()): a call that is not decoded, a path relative to the
// working directory or with "..", a directory inotify refuses (no read
// permission) on the way, a file of this user's own it may not read, more
// than kMaxWatches inodes, a descriptor of a filesystem whose changes may
// raise no event here (procfs, sysfs, a network or FUSE filesystem, and
// overlayfs, whose layers can be written beneath it), an inotify limit.
//
// What the watch does not see: a write through a shared writable mapping
// held by a process still alive (it raises no inotify event); a change
// inside a filesystem mounted from a device another machine writes; and a
// change to a file of another user's that this user may not read (which
// inotify will not watch itself, so it is watched through the name it was
// looked up by: its attributes and writes through that name) made by that
// user (or root) through another hard link to it; this user cannot make
// such a link (fs.protected_hardlinks) nor change the file. A directory has no other link; one this user may
// not read is watched through its name too, and the names in it, which the
// lookup could not have listed, are not.
#pragma once

#include <sys/types.h>

#include <map>
#include <set>
#include <string>
#include <utility>

#include "base/result.h"
#include "base/unique_fd.h"
#include "kernel/observed_thread.h"

namespace corral {

class NameWatch {
 public:
  // At most this many inodes are watched: fs.inotify.max_user_watches is the
  // user's, shared with their editors and file managers (8192 on kernels
  // before 5.11). A lookup that needs more makes the watch unwatchable.
  static constexpr size_t kMaxWatches = 2048;

  static Result<NameWatch> Open();

  // Watches what `call` depends on; call it before `call` runs.
  void Observe(const ObservedCall& call);

  // "" while all observed is watched; else the first reason it is not.
  const std::string& unwatchable() const { return unwatchable_; }

  // Whether anything watched (or the mount table) changed since Open.
  // Drains the events; once true, stays true.
  bool Changed();

  // How many inodes are watched.
  size_t size() const { return watches_.size(); }

 private:
  NameWatch(UniqueFd inotify, UniqueFd mounts) : inotify_(std::move(inotify)), mounts_(std::move(mounts)) {}

  enum class Scope { kSelf, kEntries };
  // The watch descriptor of what `fd` is, or -1 (unwatchable_ set).
  // `what` names it in unwatchable().
  int WatchFd(int fd, Scope scope, const std::string& what);
  void WatchName(int dirfd, const std::string& name, const std::string& what);
  void LookupFrom(int dirfd, const std::string& path, ObservedCall::Last last);
  void Unwatchable(std::string why);

  struct Watch {
    std::set<std::string> names;  // an event naming one of these is a change
    bool entries = false;         // a name made, removed or renamed in it is a change
  };
  UniqueFd inotify_;
  UniqueFd mounts_;
  std::map<int, Watch> watches_;                              // by watch descriptor
  std::map<std::pair<dev_t, ino_t>, int> by_inode_;           // (dev, inode) -> watch descriptor
  std::map<dev_t, bool> local_;                               // whether a filesystem's changes raise events here
  std::string unwatchable_;
  bool changed_ = false;
};

}  // namespace corral
