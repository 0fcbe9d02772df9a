// StdioModes on files of the test's own: what a command can chmod through a
// descriptor (a file, a named FIFO) is put back, each file once; a pipe,
// whose inode is its own, is not held at all.
#include "exec/stdio_modes.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

namespace corral {
namespace {

mode_t ModeOf(int fd) {
  struct stat st;
  return ::fstat(fd, &st) == 0 ? st.st_mode & 07777 : 0;
}

class StdioModesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/corral-stdio-modes-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { (void)std::system(("rm -rf '" + dir_ + "'").c_str()); }
  int Open(const std::string& name, int flags, mode_t mode) {
    int fd = ::open((dir_ + "/" + name).c_str(), flags | O_CLOEXEC, mode);
    EXPECT_GE(fd, 0) << name;
    if (fd >= 0) {
      EXPECT_EQ(::fchmod(fd, mode), 0);
    }
    return fd;
  }
  std::string dir_;
};

TEST_F(StdioModesTest, EachFilesModeComesBackOnce) {
  int in = Open("in", O_RDWR | O_CREAT, 0600);
  int out = Open("out", O_WRONLY | O_CREAT, 0640);
  StdioModes modes = StdioModes::Save({in, out, out});
  ASSERT_EQ(::fchmod(in, 0666), 0);
  ASSERT_EQ(::fchmod(out, 0604), 0);
  modes.Restore();
  EXPECT_EQ(ModeOf(in), 0600u);
  EXPECT_EQ(ModeOf(out), 0640u);
  // A mode that did not change is left alone; Restore may run again.
  modes.Restore();
  EXPECT_EQ(ModeOf(in), 0600u);
  ::close(in);
  ::close(out);
}

TEST_F(StdioModesTest, ANamedFifoIsHeldAndAPipeIsNot) {
  ASSERT_EQ(::mkfifo((dir_ + "/fifo").c_str(), 0600), 0);
  int fifo = ::open((dir_ + "/fifo").c_str(), O_RDWR | O_CLOEXEC);  // O_RDWR: no wait for a writer
  ASSERT_GE(fifo, 0);
  int pipe_fds[2];
  ASSERT_EQ(::pipe2(pipe_fds, O_CLOEXEC), 0);
  const mode_t pipe_mode = ModeOf(pipe_fds[1]);
  StdioModes modes = StdioModes::Save({pipe_fds[0], fifo, -1});
  ASSERT_EQ(::fchmod(fifo, 0666), 0);
  (void)::fchmod(pipe_fds[0], 0666);
  modes.Restore();
  EXPECT_EQ(ModeOf(fifo), 0600u);
  EXPECT_EQ(ModeOf(pipe_fds[0]), 0666u & 07777) << "a pipe's mode is its own: not put back (was " << pipe_mode << ")";
  ::close(fifo);
  ::close(pipe_fds[0]);
  ::close(pipe_fds[1]);
}

}  // namespace
}  // namespace corral
