// AwaitReady: waits until a descriptor is ready, or a deadline passes.
//
//   if (!AwaitReady(socket.get(), POLLIN, deadline)) return TimedOut();
//   ssize_t n = ::recv(socket.get(), ...);  // reports its own error
//
// Contract:
//   - True as soon as `fd` is ready for `events` (poll's revents, POLLHUP
//     and POLLERR included), also when the deadline has passed: a
//     descriptor found ready is never called late.
//   - False once the deadline has passed with nothing ready.
//   - A signal (EINTR) waits on. Another poll error while time is left
//     counts as ready, so the call that follows reports its own error.
#pragma once

#include <chrono>

namespace corral {

bool AwaitReady(int fd, short events, std::chrono::steady_clock::time_point deadline);

}  // namespace corral
