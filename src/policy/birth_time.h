// Birth time: when an inode was made (statx STATX_BTIME). With the device
// and inode number it tells the object a protected path held at the start
// of a run from a new one that got the same inode number after the first was
// freed, which a filesystem like ext4 hands out again at once.
#pragma once

#include <cstdint>

namespace corral {

// `name` in `dir` (AT_FDCWD and an absolute path work too), never following
// a symlink, in nanoseconds; 0 when the filesystem keeps no birth time or
// statx fails.
int64_t BirthTimeAt(int dir, const char* name);

}  // namespace corral
