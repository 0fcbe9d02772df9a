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
// reach the command as the caller's node: exec/child.cc opens them anew from
// the view's read-only bind.) So the mode of every other file on 0-2 that
// lives on a filesystem (a regular file, a device, a named FIFO; not a pipe
// or a socket) is saved, and put back once every process of the sandbox is
// gone:
//
//   StdioModes modes = StdioModes::Save(fds);   // before the spawn
//   ... supervise ...
//   modes.Restore();                             // after the last exit
//
// Each file is held by a descriptor of corral's own (close-on-exec, closed
// in the sandbox's init), so the mode goes back on the very file, whatever
// its name became. Not covered: the run itself (a mode the command set holds
// until the run ends), a corral killed before the restore, timestamps
// (`touch -d` of /proc/self/fd/1), user extended attributes and inode flags
// (`chattr`), and /dev/tty given as stdio, which the command cannot open
// anew inside (it has no controlling terminal there).
#pragma once

#include <sys/types.h>

#include <vector>

#include "base/unique_fd.h"

namespace corral {

class StdioModes {
 public:
  // Saves the files behind `fds` (the command's 0, 1 and 2; -1 skips one).
  static StdioModes Save(const int (&fds)[3]);
  // Puts back each mode that differs now; best effort per file.
  void Restore() const;

 private:
  struct Saved {
    UniqueFd file;
    mode_t mode;  // permission bits and sticky, set-user-ID, set-group-ID
  };
  std::vector<Saved> saved_;
};

}  // namespace corral
