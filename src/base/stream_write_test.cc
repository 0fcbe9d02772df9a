#include "base/stream_write.h"

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace corral {
namespace {

// Fills the pipe whose write end is `fd` through an open file of its own
// (O_NONBLOCK there leaves `fd` blocking).
void Fill(int fd) {
  int filler = ::open(("/proc/self/fd/" + std::to_string(fd)).c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
  ASSERT_GE(filler, 0);
  std::string block(4096, 'x');
  while (::write(filler, block.data(), block.size()) > 0) {
  }
  ::close(filler);
}

// Runs `body` in a child (the given-up mark of descriptors 0-2 is the
// process's) and returns its exit code, or -1 when it is still running
// after `limit` (it is killed then).
int InChild(const std::function<int()>& body, std::chrono::milliseconds limit) {
  pid_t pid = ::fork();
  if (pid == 0) ::_exit(body());
  auto deadline = std::chrono::steady_clock::now() + limit;
  int status = 0;
  while (::waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      return -1;
    }
    ::usleep(10000);
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// Each piece is one write of at most PIPE_BUF bytes: a packet socket keeps
// the boundaries.
TEST(StreamWriteTest, WritesInPiecesOfAtMostPipeBuf) {
  int pair[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair), 0);
  std::string line(PIPE_BUF, 'a');
  std::string longer(2 * PIPE_BUF + 10, 'b');
  EXPECT_EQ(WriteToStream(pair[0], line), StreamDelivery::kWritten);
  EXPECT_EQ(WriteToStream(pair[0], longer), StreamDelivery::kWritten);
  std::vector<size_t> sizes;
  char buffer[3 * PIPE_BUF];
  for (ssize_t n; (n = ::recv(pair[1], buffer, sizeof buffer, MSG_DONTWAIT)) > 0;) sizes.push_back(static_cast<size_t>(n));
  EXPECT_EQ(sizes, (std::vector<size_t>{PIPE_BUF, PIPE_BUF, PIPE_BUF, 10}));
  ::close(pair[0]);
  ::close(pair[1]);
}

// With no stop pending, a full stream is waited on until its reader takes
// enough: everything arrives.
TEST(StreamWriteTest, WaitsForAReaderThatComes) {
  int ends[2];
  ASSERT_EQ(::pipe2(ends, O_CLOEXEC), 0);
  Fill(ends[1]);
  std::string drained;
  std::thread reader([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    char buffer[65536];
    for (ssize_t n; (n = ::read(ends[0], buffer, sizeof buffer)) > 0;) drained.append(buffer, static_cast<size_t>(n));
  });
  std::string text(10000, 'z');
  EXPECT_EQ(WriteToStream(ends[1], text), StreamDelivery::kWritten);
  ::close(ends[1]);
  reader.join();
  ::close(ends[0]);
  EXPECT_EQ(drained.substr(drained.size() - text.size()), text);
}

// A full stream and a stop held pending: given up, promptly. Every later
// write to that standard descriptor gives up at once and writes nothing,
// even once there is room.
TEST(StreamWriteTest, APendingStopGivesAStalledStandardStreamUpForGood) {
  int code = InChild(
      [] {
        int ends[2];
        if (::pipe2(ends, 0) != 0 || ::dup2(ends[1], STDIN_FILENO) != STDIN_FILENO) return 10;
        Fill(STDIN_FILENO);
        sigset_t stop;
        ::sigemptyset(&stop);
        ::sigaddset(&stop, SIGINT);
        ::sigprocmask(SIG_BLOCK, &stop, nullptr);
        ::raise(SIGINT);
        if (WriteToStream(STDIN_FILENO, "held\n") != StreamDelivery::kGivenUp) return 11;
        ::fcntl(ends[0], F_SETFL, O_NONBLOCK);
        char buffer[65536];
        while (::read(ends[0], buffer, sizeof buffer) > 0) {
        }
        if (WriteToStream(STDIN_FILENO, "later\n") != StreamDelivery::kGivenUp) return 12;
        return ::read(ends[0], buffer, sizeof buffer) > 0 ? 13 : 0;
      },
      std::chrono::seconds(5));
  EXPECT_EQ(code, 0) << "-1: the write waited past the pending stop";
}

}  // namespace
}  // namespace corral
