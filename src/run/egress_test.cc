// EgressReporter's writer: the proxy's thread hands records over and never
// waits for the trail, however stalled; what does not fit the queue is
// counted and said once at the end.
#include "run/egress.h"

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace corral {
namespace {

// Puts a pipe of one page over stderr for the test's life; nothing reads it
// until Drain.
class StalledStderr {
 public:
  StalledStderr() {
    int fds[2];
    EXPECT_EQ(::pipe2(fds, O_CLOEXEC), 0);
    read_ = fds[0];
    (void)::fcntl(fds[1], F_SETPIPE_SZ, 4096);
    saved_ = ::dup(STDERR_FILENO);
    ::dup2(fds[1], STDERR_FILENO);
    ::close(fds[1]);
    drainer_ = std::thread();
  }
  // Reads the pipe until stderr is put back and the writers are done.
  void StartDraining() {
    drainer_ = std::thread([this] {
      char buffer[4096];
      for (;;) {
        ssize_t n = ::read(read_, buffer, sizeof buffer);
        if (n <= 0) return;
        text_.append(buffer, static_cast<size_t>(n));
      }
    });
  }
  std::string Restore() {
    ::dup2(saved_, STDERR_FILENO);
    ::close(saved_);
    if (drainer_.joinable()) drainer_.join();
    ::close(read_);
    return text_;
  }

 private:
  int read_ = -1;
  int saved_ = -1;
  std::thread drainer_;
  std::string text_;
};

EgressDecision Allowed(int i) {
  EgressDecision decision;
  decision.protocol = EgressProtocol::kHttpConnect;
  decision.host = "host" + std::to_string(i) + ".test";
  decision.port = 443;
  decision.verdict = EgressVerdict::kAllowed;
  decision.rule = "--allow-host *.test";
  return decision;
}

TEST(EgressReporterTest, AStalledTrailNeverStallsTheProxyAndTheDropsAreCountedOnce) {
  StalledStderr stderr_pipe;
  AuditTrail trail = AuditTrail::ToStderr();
  std::string written;
  {
    EgressReporter reporter(trail, 8);
    auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < 500; ++i) reporter.Decided(Allowed(i));  // ~100 KiB of records into a 4 KiB pipe
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5)) << "Decided waited for the trail";
    stderr_pipe.StartDraining();
    reporter.Finish();
    reporter.Finish();  // idempotent
  }
  written = stderr_pipe.Restore();
  size_t records = 0, dropped_records = 0;
  int64_t dropped = 0;
  size_t at = 0;
  while (at < written.size()) {
    size_t end = written.find('\n', at);
    ASSERT_NE(end, std::string::npos) << written.substr(at);
    nlohmann::json record = nlohmann::json::parse(written.substr(at, end - at));
    if (record["event"] == "egress") ++records;
    if (record["event"] == "egress_dropped") {
      ++dropped_records;
      dropped = record["dropped"].get<int64_t>();
    }
    at = end + 1;
  }
  EXPECT_EQ(dropped_records, 1u) << written;
  EXPECT_GT(dropped, 0) << written;
  EXPECT_EQ(static_cast<int64_t>(records) + dropped, 500) << written;
}

TEST(EgressReporterTest, EveryRecordIsWrittenWhenTheTrailKeepsUp) {
  StalledStderr stderr_pipe;
  stderr_pipe.StartDraining();
  AuditTrail trail = AuditTrail::ToStderr();
  {
    EgressReporter reporter(trail);
    for (int i = 0; i < 100; ++i) reporter.Decided(Allowed(i));
  }  // the destructor finishes
  std::string written = stderr_pipe.Restore();
  size_t lines = 0;
  for (char c : written) lines += c == '\n';
  EXPECT_EQ(lines, 100u) << written;
  EXPECT_EQ(written.find("egress_dropped"), std::string::npos) << written;
}

}  // namespace
}  // namespace corral
