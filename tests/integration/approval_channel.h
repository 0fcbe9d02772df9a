// The harness's side of the headless approval channel (docs/approval.md),
// for the integration tests that answer corral's questions: a socketpair
// whose one end is passed as --approval-fd.
#pragma once

#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <fcntl.h>

#include <chrono>
#include <optional>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace corral_it {

// The harness's end of a socketpair; corral's end is inherited by the next
// Process only (the test's copy is closed once corral holds it).
class Channel {
 public:
  Channel() {
    int ends[2];
    EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, ends), 0);
    harness_ = ends[0];
    corral_ = ends[1];
    ::fcntl(harness_, F_SETFD, FD_CLOEXEC);
  }
  ~Channel() {
    CloseHarness();
    DropCorralsEnd();
  }
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;

  std::string corral_fd() const { return std::to_string(corral_); }
  // What /proc/PID/fd/N reads for a descriptor of corral's end.
  std::string corral_link() const {
    struct stat info {};
    EXPECT_EQ(::fstat(corral_, &info), 0);
    return "socket:[" + std::to_string(info.st_ino) + "]";
  }
  // True when the harness's end reads end of input within `limit`: every
  // copy of corral's end, in every process, is closed.
  bool EndOfInputWithin(std::chrono::milliseconds limit) const {
    struct pollfd entry = {harness_, POLLIN, 0};
    if (::poll(&entry, 1, static_cast<int>(limit.count())) != 1) return false;
    char c;
    return ::recv(harness_, &c, 1, MSG_PEEK) == 0;
  }
  // Once corral runs: only its copy keeps its end open, so its closing is an EOF here.
  void DropCorralsEnd() {
    if (corral_ >= 0) ::close(corral_);
    corral_ = -1;
  }
  bool HarnessOpen() const { return harness_ >= 0; }
  void CloseHarness() {
    if (harness_ >= 0) ::close(harness_);
    harness_ = -1;
  }

  // The next request line, parsed; nullopt at end of input (corral closed
  // its end without asking). Waits at most a minute, so a hang fails the test.
  std::optional<nlohmann::json> NextRequest() {
    std::string line;
    for (;;) {
      struct pollfd entry = {harness_, POLLIN, 0};
      if (::poll(&entry, 1, 60000) != 1) {
        ADD_FAILURE() << "corral neither asked nor closed the channel";
        return std::nullopt;
      }
      char c;
      ssize_t got = ::read(harness_, &c, 1);
      if (got <= 0) {
        EXPECT_EQ(line, "") << "a request line cut short";
        return std::nullopt;
      }
      if (c == '\n') break;
      line += c;
    }
    nlohmann::json request = nlohmann::json::parse(line, nullptr, false);
    EXPECT_FALSE(request.is_discarded()) << line;
    return request;
  }
  void Send(const std::string& text) const {
    EXPECT_EQ(::write(harness_, text.data(), text.size()), static_cast<ssize_t>(text.size()));
  }
  void Answer(const nlohmann::json& request, const std::string& answer) const {
    Send(nlohmann::json({{"v", 1}, {"id", request["id"]}, {"answer", answer}}).dump() + "\n");
  }
  // Everything still readable up to the end of input (after corral exited).
  std::string Rest() const {
    std::string rest;
    char buffer[4096];
    for (ssize_t got; (got = ::read(harness_, buffer, sizeof buffer)) > 0;) rest.append(buffer, static_cast<size_t>(got));
    return rest;
  }

 private:
  int harness_ = -1;
  int corral_ = -1;
};

}  // namespace corral_it
