#include "base/random.h"

#include <sys/random.h>

#include <cerrno>

namespace corral {

Result<std::string> RandomBytes(size_t count) {
  std::string bytes(count, '\0');
  size_t filled = 0;
  while (filled < count) {
    ssize_t got = ::getrandom(bytes.data() + filled, count - filled, 0);
    if (got < 0) {
      if (errno == EINTR) continue;
      return Error::FromErrno(ErrorKind::kInternal, "reading random bytes", "getrandom", errno);
    }
    filled += static_cast<size_t>(got);
  }
  return bytes;
}

}  // namespace corral
