#include "policy/birth_time.h"

#include <fcntl.h>
#include <sys/stat.h>

namespace corral {

int64_t BirthTimeAt(int dir, const char* name) {
  struct statx st = {};
  if (::statx(dir, name, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT, STATX_BTIME, &st) != 0) return 0;
  if ((st.stx_mask & STATX_BTIME) == 0) return 0;
  return static_cast<int64_t>(st.stx_btime.tv_sec) * 1000000000 + st.stx_btime.tv_nsec;
}

}  // namespace corral
