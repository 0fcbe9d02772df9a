// The sweep journal: a write-ahead record of what a run's sweep must look at.
//
// The sweep (policy/sweep.h) runs after the sandbox has exited. If corral
// itself is killed first (SIGKILL, a crash, a power cut), whatever the run
// created at a missing protected path would stay in the tree. So before the
// spawn, RunConfined writes
//
//   $XDG_STATE_HOME/corral/pending/<run>.json   (0600, in a 0700 directory)
//
// naming the run's missing and symlinked protected paths, its quarantine and
// corral's pid and start time; after the sweep it removes the record. The
// next `corral run` by the same user, before it builds its own policy, calls
// RecoverInterruptedSweeps: every record whose corral is gone is swept now,
// and reported like any sweep. A record whose corral still runs is left
// alone; one that cannot be read or parsed is reported and kept.
//
// The recovery cannot tell the run's leftovers from a file the user made at
// the same path after the kill; both are moved to the quarantine (never
// deleted when a move is possible), and the message says so.
#pragma once

#include <string>
#include <vector>

#include "policy/protected.h"
#include "policy/sweep.h"

namespace corral {

// $XDG_STATE_HOME/corral/pending, else <home>/.local/state/corral/pending.
std::string SweepJournalDir(const std::string& home);

// Writes the record for `run`; returns its path, or an empty string when
// the set has nothing a sweep would look at. Errors are returned, not thrown.
Result<std::string> WriteSweepJournal(const std::string& dir, const std::string& run, const ProtectedSet& set,
                                      const std::string& quarantine);

void RemoveSweepJournal(const std::string& path);

struct RecoveredSweep {
  std::string run;  // the interrupted run
  std::vector<SweepFinding> findings;
  std::string error;  // a record that could not be read or parsed (kept)
};

// Sweeps what every interrupted run in `dir` left behind.
std::vector<RecoveredSweep> RecoverInterruptedSweeps(const std::string& dir);

}  // namespace corral
