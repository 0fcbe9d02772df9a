#include "base/unique_fd.h"

#include <unistd.h>

namespace corral {

void UniqueFd::Reset(int fd) {
  if (fd_ >= 0 && fd_ != fd) ::close(fd_);
  fd_ = fd;
}

}  // namespace corral
