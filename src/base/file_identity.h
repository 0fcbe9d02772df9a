// A file's identity: its (device, inode) pair, as stat(2) reports it. Two
// opens of the same path name the same file only when their identities match;
// pins (policy/path.h) and the mount plan's pin checks compare these.
#pragma once

#include <sys/types.h>

namespace corral {

struct FileIdentity {
  dev_t dev = 0;
  ino_t ino = 0;
  bool operator==(const FileIdentity&) const = default;
};

}  // namespace corral
