// The sweep journal: a write-ahead record of what a run's sweep must look at.
//
// The sweep (repair/sweep.h) runs after the sandbox has exited. If corral
// itself is killed first (SIGKILL, a crash, a power cut), whatever the run
// created at a missing protected path would stay in the tree. So before the
// spawn, RunConfined takes a journal slot,
//
//   $XDG_STATE_HOME/corral/pending/slot-<n>.json   (0600, in a 0700 directory)
//
// reached only through the state directory's descriptor (state/state_dir.h),
// never through a symlink or a directory another user could write,
//
// holding an exclusive flock(2) on it for the whole run, and writes the run's
// missing and symlinked protected paths and its quarantine there, marked
// active; after the sweep it empties the slot (the record is done). The kernel drops the lock
// when corral dies, however it dies. The next `corral run` by the same user,
// before it builds its own policy, calls RecoverInterruptedSweeps: every
// active record whose slot it can lock belonged to a corral that is gone, and
// is swept now and reported like any sweep. A slot another corral holds is
// left alone; a record that cannot be read or parsed, or names a path outside
// its root, is reported once and kept, marked so it is never swept. (The
// directory is corral's own state: no sandbox can reach it, and no grant may
// lie inside it.)
//
// Slots are reused, so a run creates and removes no file (on ext4 an unlink
// alone costs more than the rest of the journal). An empty slot holds no
// record, so the recovery stats each slot and opens only the non-empty ones
// (a directory that has seen many parallel runs holds up to 64 slots, and
// every run recovers); a slot an older corral marked done instead of
// emptying it is emptied by the next recovery that can lock it.
//
// Nothing a command names may switch the journal off for later runs: a name
// that is not UTF-8 is written as json_bytes.h's {"bytes_hex": ...} (the
// recovery decodes it), a record larger than the recovery reads (16 MiB) is
// never written (Begin fails, and RunConfined refuses the run), and a slot
// that cannot be used (not a private file, a rejected record kept for a
// person) is passed over for the next. A state directory on a read-only
// filesystem is one that cannot be made (code state_dir_unavailable): the
// run goes on without a journal, as without a state directory.
//
// The recovery cannot tell the run's leftovers from a file the user made at
// the same path after the kill; both are moved to the quarantine (never
// deleted when a move is possible), and the message says so.
#pragma once

#include <string>
#include <vector>

#include "base/result.h"
#include "base/unique_fd.h"
#include "state/state_dir.h"
#include "policy/protected.h"
#include "repair/sweep.h"

namespace corral {

// A slot kept, locked, from one run to the next by a caller that runs one
// command after another (an executor, executor/executor.h): each run's
// record is written over the last one's, and its end marks the record done
// (its first byte) instead of emptying the slot, so the file keeps its
// pages and the next run takes no slot. A done record is never swept; the
// recovery empties one it can lock (a kept slot it cannot: its corral
// lives). Emptied and released when this object goes. One run at a time.
class SweepJournalSlot {
 public:
  SweepJournalSlot() = default;
  SweepJournalSlot(SweepJournalSlot&&) = default;
  SweepJournalSlot& operator=(SweepJournalSlot&& other) noexcept;
  ~SweepJournalSlot() { Release(); }
  // Empties the slot and releases its lock.
  void Release();
  const std::string& path() const { return path_; }

 private:
  friend class SweepJournal;
  UniqueFd fd_;
  std::string path_;
  size_t size_ = 0;  // of what the file holds now
};

// One run's record, locked for as long as this object lives.
class SweepJournal {
 public:
  SweepJournal() = default;
  // Takes a free slot in <state>/pending and writes the record. Nothing is
  // written (an empty journal) when the set has nothing a sweep would look at.
  // With `kept`: the record goes in that slot, which is taken first when
  // it holds none; Finish then marks it done and keeps it.
  static Result<SweepJournal> Begin(const StateDir& state, const std::string& run, const ProtectedSet& set,
                                    SweepJournalSlot* kept = nullptr);
  // The sweep is done: empties the slot (or, failing that, marks the record
  // done), and releases it; a kept slot's record is marked done, and the
  // slot kept.
  void Finish();
  const std::string& path() const { return kept_ != nullptr ? kept_->path_ : path_; }

 private:
  UniqueFd fd_;
  std::string path_;
  SweepJournalSlot* kept_ = nullptr;
};

struct RecoveredSweep {
  std::string run;  // the interrupted run
  std::vector<SweepFinding> findings;
  std::string error;  // a record that could not be read or parsed (kept)
};

// Sweeps what every interrupted run recorded in <state>/pending left behind,
// into <state>/quarantine.
std::vector<RecoveredSweep> RecoverInterruptedSweeps(const StateDir& state);

}  // namespace corral
