#include "exec/pty_relay.h"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <string>

namespace corral {
namespace {

using Clock = std::chrono::steady_clock;

// After the tree is gone: at most this much more output, for at most this long.
constexpr size_t kFinishBytes = 1 << 20;
constexpr auto kFinishTime = std::chrono::seconds(2);

// A descriptor of its own for the terminal on `fd`, non-blocking, so that
// the caller's shell keeps its blocking one (O_NONBLOCK is a property of the
// open file, shared with every holder of `fd`). Invalid when the terminal
// cannot be opened again (exclusive mode) or is not the same one.
UniqueFd ReopenNonBlocking(int fd, int access) {
  std::string path = "/proc/self/fd/" + std::to_string(fd);
  UniqueFd reopened(::open(path.c_str(), access | O_NOCTTY | O_NONBLOCK | O_CLOEXEC));
  struct stat given, opened;
  if (!reopened || ::fstat(fd, &given) != 0 || ::fstat(reopened.get(), &opened) != 0 ||
      given.st_rdev != opened.st_rdev || given.st_dev != opened.st_dev || given.st_ino != opened.st_ino) {
    return UniqueFd();
  }
  return reopened;
}

}  // namespace

std::optional<CommandPty> CommandPtyFor() {
  CommandPty pty;
  if (::isatty(STDIN_FILENO) == 0 || ::isatty(STDOUT_FILENO) == 0 || ::tcgetattr(STDIN_FILENO, &pty.modes) != 0) {
    return std::nullopt;
  }
  for (int fd = 0; fd <= 2; ++fd) {
    if (::isatty(fd) != 0) pty.descriptors |= 1u << fd;
  }
  if (::ioctl(STDIN_FILENO, TIOCGWINSZ, &pty.size) != 0) pty.size = {};
  return pty;
}

PtyRelay::PtyRelay(int master) : master_(master), terminal_(STDIN_FILENO) {
  ::fcntl(master_, F_SETFL, ::fcntl(master_, F_GETFL) | O_NONBLOCK);
  input_owned_ = ReopenNonBlocking(STDIN_FILENO, O_RDONLY);
  output_owned_ = ReopenNonBlocking(STDOUT_FILENO, O_WRONLY);
  input_ = input_owned_ ? input_owned_.get() : STDIN_FILENO;
  output_ = output_owned_ ? output_owned_.get() : STDOUT_FILENO;
}

void PtyRelay::EnterRawMode() const {
  struct termios modes;
  if (::tcgetattr(terminal_, &modes) != 0) return;
  ::cfmakeraw(&modes);
  ::tcsetattr(terminal_, TCSANOW, &modes);
}

void PtyRelay::Fill(struct pollfd fds[4]) const {
  fds[0] = {master_open_ && to_terminal_.size() < kBuffer ? master_ : -1, POLLIN, 0};
  fds[1] = {output_open_ && !to_terminal_.empty() ? output_ : -1, POLLOUT, 0};
  fds[2] = {input_open_ && master_open_ && to_master_.size() < kBuffer ? input_ : -1, POLLIN, 0};
  fds[3] = {master_open_ && !to_master_.empty() ? master_ : -1, POLLOUT, 0};
}

void PtyRelay::Handle(const struct pollfd fds[4]) {
  if (fds[0].fd >= 0 && fds[0].revents != 0) ReadMaster();
  if (fds[1].fd >= 0 && fds[1].revents != 0) WriteOutput();
  if (fds[2].fd >= 0 && fds[2].revents != 0) ReadInput();
  if (fds[3].fd >= 0 && fds[3].revents != 0) WriteMaster();
}

void PtyRelay::Resize() const {
  struct winsize size;
  if (::ioctl(terminal_, TIOCGWINSZ, &size) == 0) ::ioctl(master_, TIOCSWINSZ, &size);
}

// EIO is how a master reports that no slave is open any more.
void PtyRelay::ReadMaster() {
  char buffer[1 << 14];
  while (master_open_ && to_terminal_.size() < kBuffer) {
    ssize_t n = ::read(master_, buffer, std::min(sizeof buffer, kBuffer - to_terminal_.size()));
    if (n < 0 && errno == EINTR) continue;
    if (n == 0 || (n < 0 && errno != EAGAIN)) {
      master_open_ = false;
      to_master_.clear();
    }
    if (n <= 0) return;
    if (output_open_) to_terminal_.append(buffer, static_cast<size_t>(n));
  }
}

// A blocking descriptor (the terminal could not be reopened) takes a small
// write at a time, which a terminal that polled writable takes at once.
void PtyRelay::WriteOutput() {
  size_t chunk = output_owned_ ? to_terminal_.size() : std::min<size_t>(to_terminal_.size(), 512);
  ssize_t n = ::write(output_, to_terminal_.data(), chunk);
  if (n > 0) to_terminal_.erase(0, static_cast<size_t>(n));
  if (n < 0 && errno != EINTR && errno != EAGAIN) {
    output_open_ = false;  // hung up: what the command writes goes nowhere
    to_terminal_.clear();
  }
}

void PtyRelay::ReadInput() {
  char buffer[1 << 12];
  ssize_t n = ::read(input_, buffer, std::min(sizeof buffer, kBuffer - to_master_.size()));
  if (n > 0) to_master_.append(buffer, static_cast<size_t>(n));
  if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) input_open_ = false;
}

void PtyRelay::WriteMaster() {
  ssize_t n = ::write(master_, to_master_.data(), to_master_.size());
  if (n > 0) to_master_.erase(0, static_cast<size_t>(n));
  if (n < 0 && errno != EINTR && errno != EAGAIN) {
    master_open_ = false;
    to_master_.clear();
  }
}

void PtyRelay::Finish() {
  input_open_ = false;  // what the caller types now is for their shell
  to_master_.clear();
  const Clock::time_point deadline = Clock::now() + kFinishTime;
  size_t budget = kFinishBytes;
  while (output_open_) {
    size_t before = to_terminal_.size();
    if (budget > 0) ReadMaster();
    budget -= std::min(budget, to_terminal_.size() - before);
    if (to_terminal_.empty()) break;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) break;
    struct pollfd output = {output_, POLLOUT, 0};
    int ready = ::poll(&output, 1, static_cast<int>(left));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) break;
    WriteOutput();
  }
  master_open_ = false;
  to_terminal_.clear();
}

}  // namespace corral
