#include "base/await_ready.h"

#include <poll.h>

#include <cerrno>

namespace corral {

bool AwaitReady(int fd, short events, std::chrono::steady_clock::time_point deadline) {
  for (;;) {
    // Rounded up: a wait never ends before the deadline.
    auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    pollfd entry = {fd, events, 0};
    int ready = ::poll(&entry, 1, left.count() > 0 ? static_cast<int>(left.count()) : 0);
    if (ready > 0) return true;
    if (ready < 0 && errno != EINTR) return left.count() > 0;
    if (ready == 0 && left.count() <= 0) return false;
    // EINTR: wait on.
  }
}

}  // namespace corral
