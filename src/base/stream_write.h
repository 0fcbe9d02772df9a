// WriteToStream: bytes for a stream a reader drains (stderr as a pipe, a
// socket or a terminal), which that reader may stop draining for good,
// written so that the user can still stop corral.
//
// A run blocks the signals a user stops corral with (SIGINT, SIGTERM,
// SIGHUP, SIGQUIT) from its spawn to its end, to forward them to the
// command or act on them later, so none is lost (exec/spawn.h). A plain
// write(2) that waits for a reader that never comes would then hold corral
// for good, deaf to Ctrl-C.
//
// Contract:
//   - The bytes go in writes of at most PIPE_BUF each, made only when
//     poll(2) says the stream has room, so no write waits for the reader,
//     and `text` of at most PIPE_BUF bytes reaches a pipe in one write,
//     whole.
//   - While the stream has no room, a stop signal that is pending (the
//     caller blocked it) gives the rest up: kGivenUp, and the caller goes
//     on (to act on the signal) instead of waiting. From then on every
//     write to that descriptor through WriteToStream gives up at once,
//     without writing: the stream has shown that nobody drains it, and a
//     line half written stays the last one there.
//   - A stop that is not blocked acts as it always does (its default ends
//     the process; a handler interrupts the wait, which goes on).
//   - A stream that fails (its reader gone: EPIPE) loses the rest: kWritten,
//     as for a file that fails; the write's SIGPIPE, if not blocked, ends
//     the process as a plain write's would.
//   - Safe from any thread. The "given up" mark is kept for descriptors 0-2;
//     another descriptor gives up each write on its own.
//
//   if (WriteToStream(STDERR_FILENO, line) == StreamDelivery::kGivenUp) ...
#pragma once

#include <string_view>

namespace corral {

enum class StreamDelivery { kWritten, kGivenUp };

StreamDelivery WriteToStream(int fd, std::string_view text);

}  // namespace corral
