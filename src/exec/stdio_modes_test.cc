// StdioModes on files of the test's own: what a command can chmod through a
// descriptor (a file, a named FIFO) is put back, each file once; a pipe,
// whose inode is its own, is not held at all; overlapping runs put back the
// first mode of the file, shared through their records.
#include "exec/stdio_modes.h"

#include <fcntl.h>
#include <dirent.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>
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
  // StdioModes::Save with no records, which must succeed.
  static StdioModes Saved(const int (&fds)[3], UniqueFd records = UniqueFd(),
                          StdioModes::ViewDevices devices = StdioModes::ViewDevices::kGiven) {
    auto shared = std::make_shared<UniqueFd>(std::move(records));
    Result<StdioModes> modes = StdioModes::Save(fds, devices, [shared] { return Result<UniqueFd>(std::move(*shared)); });
    EXPECT_TRUE(modes.ok()) << modes.error().ToString();
    return modes.ok() ? std::move(modes).value() : StdioModes();
  }
  // The records directory, made once; a new descriptor of it each call.
  UniqueFd Records() {
    const std::string path = dir_ + "/records";
    (void)::mkdir(path.c_str(), 0700);
    return UniqueFd(::open(path.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  }
  std::set<std::string> RecordNames() {
    std::set<std::string> names;
    if (DIR* d = ::opendir((dir_ + "/records").c_str())) {
      while (dirent* e = ::readdir(d)) {
        if (e->d_name[0] != '.') names.insert(e->d_name);
      }
      ::closedir(d);
    }
    return names;
  }
  static std::string RecordNameOf(int fd) {
    struct stat st;
    EXPECT_EQ(::fstat(fd, &st), 0);
    std::ostringstream name;
    name << std::hex << st.st_dev << "-" << st.st_ino;
    return name.str();
  }
  std::string dir_;
};

TEST_F(StdioModesTest, EachFilesModeComesBackOnce) {
  int in = Open("in", O_RDWR | O_CREAT, 0600);
  int out = Open("out", O_WRONLY | O_CREAT, 0640);
  StdioModes modes = Saved({in, out, out});
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
  StdioModes modes = Saved({pipe_fds[0], fifo, -1});
  ASSERT_EQ(::fchmod(fifo, 0666), 0);
  (void)::fchmod(pipe_fds[0], 0666);
  modes.Restore();
  EXPECT_EQ(ModeOf(fifo), 0600u);
  EXPECT_EQ(ModeOf(pipe_fds[0]), 0666u & 07777) << "a pipe's mode is its own: not put back (was " << pipe_mode << ")";
  ::close(fifo);
  ::close(pipe_fds[0]);
  ::close(pipe_fds[1]);
}

// Two runs on one log: the second starts after the first one's command made
// it world-writable, and outlasts the first. Each puts back the first mode
// (the record's), and the last removes the record.
TEST_F(StdioModesTest, OverlappingRunsPutBackTheFirstMode) {
  int log = Open("log", O_WRONLY | O_CREAT, 0600);
  StdioModes first = Saved({-1, log, log}, Records());
  EXPECT_EQ(first.note(), "");
  EXPECT_EQ(RecordNames(), (std::set<std::string>{"lock", RecordNameOf(log)}));
  ASSERT_EQ(::fchmod(log, 0666), 0);  // the first run's command
  StdioModes second = Saved({-1, log, -1}, Records());
  first.Restore();
  EXPECT_EQ(ModeOf(log), 0600u);
  EXPECT_EQ(RecordNames(), (std::set<std::string>{"lock", RecordNameOf(log)})) << "the second run still holds it";
  ASSERT_EQ(::fchmod(log, 0644), 0);  // the second run's command
  second.Restore();
  EXPECT_EQ(ModeOf(log), 0600u);
  EXPECT_EQ(RecordNames(), (std::set<std::string>{"lock"}));
  second.Restore();  // once only
  EXPECT_EQ(ModeOf(log), 0600u);
  ::close(log);
}

// A record no run holds was left by a corral that was killed: its mode is
// not trusted (the file may have been chmodded since, or be another file on
// a reused inode); the mode now is taken and written over it.
TEST_F(StdioModesTest, ARecordNoRunHoldsIsNotTrusted) {
  int log = Open("log", O_WRONLY | O_CREAT, 0640);
  Records();
  const std::string record = dir_ + "/records/" + RecordNameOf(log);
  std::ofstream(record) << "0777\n";
  StdioModes run = Saved({-1, log, -1}, Records());
  std::ifstream written(record);
  std::string text((std::istreambuf_iterator<char>(written)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "0640\n");
  ASSERT_EQ(::fchmod(log, 0606), 0);
  run.Restore();
  EXPECT_EQ(ModeOf(log), 0640u);
  ::close(log);
}

// A record that cannot be taken (here a directory stands at its name; a
// full disk in practice) refuses the run: running without one, it would let
// a later run take the mode its command set. The records taken before it
// are let go of.
TEST_F(StdioModesTest, ARecordThatCannotBeTakenRefusesTheRun) {
  int in = Open("in", O_RDONLY | O_CREAT, 0600);
  int out = Open("out", O_WRONLY | O_CREAT, 0600);
  Records();
  ASSERT_EQ(::mkdir((dir_ + "/records/" + RecordNameOf(out)).c_str(), 0700), 0);
  const int fds[3] = {in, out, -1};
  Result<StdioModes> modes = StdioModes::Save(fds, StdioModes::ViewDevices::kGiven, [this] { return Result<UniqueFd>(Records()); });
  ASSERT_FALSE(modes.ok());
  EXPECT_NE(modes.error().message().find("nothing was run"), std::string::npos) << modes.error().ToString();
  EXPECT_NE(modes.error().message().find(RecordNameOf(out)), std::string::npos) << modes.error().ToString();
  EXPECT_EQ(RecordNames(), (std::set<std::string>{"lock", RecordNameOf(out)})) << "the first file's record is gone";
  ::close(in);
  ::close(out);
}

// A run with pipes alone holds nothing and never opens the records.
TEST_F(StdioModesTest, PipesAloneTouchNoRecords) {
  int pipe_fds[2];
  ASSERT_EQ(::pipe2(pipe_fds, O_CLOEXEC), 0);
  bool opened = false;
  const int fds[3] = {pipe_fds[0], pipe_fds[1], pipe_fds[1]};
  Result<StdioModes> modes = StdioModes::Save(fds, StdioModes::ViewDevices::kGiven, [&opened] {
    opened = true;
    return Result<UniqueFd>(UniqueFd());
  });
  ASSERT_TRUE(modes.ok());
  EXPECT_FALSE(opened);
  EXPECT_EQ(modes->note(), "");
  ::close(pipe_fds[0]);
  ::close(pipe_fds[1]);
}

// With no records a run saves what it sees, and says so.
TEST_F(StdioModesTest, WithoutRecordsTheNoteSaysSo) {
  int log = Open("log", O_WRONLY | O_CREAT, 0600);
  StdioModes run = Saved({-1, log, -1});
  EXPECT_NE(run.note().find("no state directory"), std::string::npos) << run.note();
  ::close(log);
}

// The view's devices are opened anew inside a mount view: the caller's node
// is not held (no record is made); without a view it is.
TEST_F(StdioModesTest, TheViewsDevicesAreHeldOnlyWithoutAView) {
  int null = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  ASSERT_GE(null, 0);
  {
    StdioModes reopened = Saved({null, -1, -1}, Records(), StdioModes::ViewDevices::kReopened);
    EXPECT_EQ(RecordNames(), std::set<std::string>{});
  }
  StdioModes given = Saved({null, -1, -1}, Records(), StdioModes::ViewDevices::kGiven);
  EXPECT_EQ(RecordNames(), (std::set<std::string>{"lock", RecordNameOf(null)}));
  given.Restore();
  EXPECT_EQ(RecordNames(), std::set<std::string>{"lock"});
  ::close(null);
}

// A file that cannot be held (no descriptor left) refuses the run.
TEST_F(StdioModesTest, AFileThatCannotBeHeldIsAnError) {
  int log = Open("log", O_WRONLY | O_CREAT, 0600);
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    struct rlimit three = {3, 3};
    if (::setrlimit(RLIMIT_NOFILE, &three) != 0) ::_exit(2);
    const int fds[3] = {-1, log, -1};
    Result<StdioModes> modes = StdioModes::Save(fds, StdioModes::ViewDevices::kGiven, nullptr);
    ::_exit(!modes.ok() && modes.error().message().find("cannot hold descriptor") != std::string::npos ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  ::close(log);
}

}  // namespace
}  // namespace corral
