#include "base/stream_write.h"

#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>

#include "base/mutant.h"

namespace corral {
namespace {

// The standard descriptors a write gave up on.
std::atomic<bool> g_given_up[3];

// A stop the caller holds blocked is pending (sigpending lists only
// blocked ones: any other has been delivered).
bool StopPending() {
  sigset_t pending;
  if (::sigpending(&pending) != 0) return false;
  for (int signal : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) {
    if (::sigismember(&pending, signal) == 1) return true;
  }
  return false;
}

}  // namespace

StreamDelivery WriteToStream(int fd, std::string_view text) {
  std::atomic<bool>* given_up = fd >= 0 && fd < 3 ? &g_given_up[fd] : nullptr;
  if (given_up != nullptr && given_up->load()) return StreamDelivery::kGivenUp;
  while (!text.empty()) {
    struct pollfd room = {fd, POLLOUT, 0};
    int ready = ::poll(&room, 1, 100);
    if (ready < 0 && errno != EINTR) return StreamDelivery::kWritten;
    if (ready <= 0) {
      if (StopPending() && !MutantActive(Mutant::kTrailStallDeaf)) {
        if (given_up != nullptr) given_up->store(true);
        return StreamDelivery::kGivenUp;
      }
      continue;
    }
    ssize_t n = ::write(fd, text.data(), std::min<size_t>(text.size(), PIPE_BUF));
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) return StreamDelivery::kWritten;
    text.remove_prefix(static_cast<size_t>(n));
  }
  return StreamDelivery::kWritten;
}

}  // namespace corral
