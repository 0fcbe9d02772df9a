// The modes of the caller's files behind the command's descriptors 0-2,
// saved before a confined run and put back after it.
//
// A descriptor the caller hands the command (its terminal, a log file as
// stdout, a file fed to stdin) reaches a file outside every grant, and the
// kernel lets a file's owner chmod it through any descriptor (fchmod, or
// chmod of /proc/self/fd/1) with no capability; Landlock has no right for
// chmod. That owner is the caller, so the command could leave the caller's
// terminal writable by every local user (`chmod 0666 /proc/self/fd/1`) or a
// file fed to its stdin readable by all. (Set-user-ID and set-group-ID bits
// are refused by seccomp, and the view's own devices, /dev/null first, never
// reach a command in a mount view as the caller's node: exec/view_devices.h.)
// So the mode of every other file on 0-2 that lives on a filesystem (a
// regular file, a device, a named FIFO; not a pipe or a socket) is saved,
// and put back once every process of the sandbox is gone:
//
//   Result<StdioModes> modes = StdioModes::Save(fds, ViewDevices::kReopened, open_records);
//   ... supervise ...
//   modes->Restore();                            // after the last exit
//
// Runs overlap: two runs on one terminal, or appending to one log. The
// second would save the mode the first one's command had just set, and put
// it back after the first run's repair. So the first mode is shared through
// `records`, a directory of corral's own (the state directory's `stdio`):
// one record per file, named by its device and inode, holding the mode the
// first of the overlapping runs saw; each run holds a shared flock on it
// while it lasts, and every run puts that mode back, the last one removing
// the record. All of it under an exclusive flock on `records/lock`. A record
// no run holds (its corral was killed) is not trusted: the file's mode now
// is taken instead. So a run that cannot take its record (a full disk, a
// stdio/ that cannot be made) is refused: running without one, it would let
// a later run take the mode its command set. With no state directory at all
// a run saves the mode it sees, and `note()` says so. `records` is opened
// only when there is a file to hold (a run with pipes alone touches nothing).
//
// Each file is held by a descriptor of corral's own (close-on-exec, closed
// in the sandbox's init), so the mode goes back on the very file, whatever
// its name became; a file that cannot be held (no descriptor left) is an
// error, and nothing runs. Not covered: the run itself (a mode the command
// set holds until the run ends), a corral killed before the restore, runs of
// another user on the same file (their own state directory), timestamps
// (`touch -d` of /proc/self/fd/1), user extended attributes and inode flags
// (`chattr`), and /dev/tty given as stdio, which the command cannot open
// anew inside (it has no controlling terminal there).
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

#include "base/result.h"
#include "base/unique_fd.h"

namespace corral {

class StdioModes {
 public:
  // Whether the child opens the view's devices on stdio anew (a run with a
  // mount view): then the caller's nodes of them are not held.
  enum class ViewDevices { kReopened, kGiven };

  // The directory of shared records (held until Restore), or an invalid
  // descriptor for none; opened only when a file is to be held.
  using OpenRecords = std::function<Result<UniqueFd>()>;

  // Saves the files behind `fds` (the command's 0, 1 and 2; -1 skips one).
  static Result<StdioModes> Save(const int (&fds)[3], ViewDevices devices, const OpenRecords& records);
  // Puts back each mode that differs now (best effort per file) and lets go
  // of the records. Once; a second call does nothing.
  void Restore();
  // Empty, or why the modes are this run's own and not the shared first ones.
  const std::string& note() const { return note_; }

  StdioModes() = default;
  StdioModes(StdioModes&&) = default;
  StdioModes& operator=(StdioModes&&) = default;
  // Restores, when the caller has not: a run refused after Save leaves no
  // record behind for a later run to find unheld.
  ~StdioModes() { Restore(); }

 private:
  struct Saved {
    UniqueFd file;
    mode_t mode;        // permission bits and sticky, set-user-ID, set-group-ID
    UniqueFd record;    // the shared record, flocked shared; or none
    std::string name;   // the record's name in records_
  };
  std::vector<Saved> saved_;
  UniqueFd records_;
  std::string note_;
};

}  // namespace corral
