#include "base/await_ready.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <chrono>

#include <gtest/gtest.h>

#include "base/unique_fd.h"

namespace corral {
namespace {

using Clock = std::chrono::steady_clock;

struct Pipe {
  UniqueFd read_end, write_end;
  Pipe() {
    int ends[2];
    EXPECT_EQ(::pipe2(ends, O_CLOEXEC), 0);
    read_end = UniqueFd(ends[0]);
    write_end = UniqueFd(ends[1]);
  }
};

TEST(AwaitReady, ADescriptorReadyNowIsReadyAtOnce) {
  Pipe pipe;
  ASSERT_EQ(::write(pipe.write_end.get(), "x", 1), 1);
  EXPECT_TRUE(AwaitReady(pipe.read_end.get(), POLLIN, Clock::now() + std::chrono::seconds(5)));
  EXPECT_TRUE(AwaitReady(pipe.write_end.get(), POLLOUT, Clock::now() + std::chrono::seconds(5)));
}

TEST(AwaitReady, NothingReadyEndsAtTheDeadlineAndNotBefore) {
  Pipe pipe;
  const auto start = Clock::now();
  EXPECT_FALSE(AwaitReady(pipe.read_end.get(), POLLIN, start + std::chrono::milliseconds(50)));
  EXPECT_GE(Clock::now() - start, std::chrono::milliseconds(50));
}

TEST(AwaitReady, ADescriptorReadyPastTheDeadlineIsStillReady) {
  Pipe pipe;
  ASSERT_EQ(::write(pipe.write_end.get(), "x", 1), 1);
  EXPECT_TRUE(AwaitReady(pipe.read_end.get(), POLLIN, Clock::now() - std::chrono::seconds(1)));
  Pipe empty;
  EXPECT_FALSE(AwaitReady(empty.read_end.get(), POLLIN, Clock::now() - std::chrono::seconds(1)));
}

TEST(AwaitReady, AClosedWriterMakesTheReaderReady) {
  Pipe pipe;
  pipe.write_end.Reset();
  EXPECT_TRUE(AwaitReady(pipe.read_end.get(), POLLIN, Clock::now() + std::chrono::seconds(5)));
}

}  // namespace
}  // namespace corral
