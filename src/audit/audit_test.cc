// The audit trail: one JSON line per record with ts, run and event, written
// to a 0600 file with one write per record, rotated only under its lock;
// run ids differ across trails; every ErrorKind maps to a failure reason
// from the closed set.
#include "audit/audit.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <iterator>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "testing/test_scratch_dir.h"

namespace corral {
namespace {

using ::corral::testing::TestTree;

std::vector<nlohmann::json> Lines(const std::string& path) {
  std::vector<nlohmann::json> lines;
  std::istringstream in(TestTree::Read(path));
  std::string line;
  while (std::getline(in, line)) {
    nlohmann::json parsed = nlohmann::json::parse(line, nullptr, false);
    EXPECT_FALSE(parsed.is_discarded()) << "not JSON: " << line;
    lines.push_back(parsed);
  }
  return lines;
}

TEST(AuditTrail, ToFileWritesOneJsonLinePerRecord) {
  TestTree tree;
  std::string path = tree.Join("audit.jsonl");
  {
    Result<AuditTrail> trail = AuditTrail::ToFile(path);
    ASSERT_TRUE(trail.ok()) << trail.error().ToString();
    trail->Record(AuditEvent("spawned").Set("fingerprint", "abc").Set("grants", 3).Set("network", "none"));
    trail->Record(AuditEvent("exited").Set("code", 7).Set("by_corral", false));
    trail->Record(AuditEvent("note").Set("text", "line one\nline two").Set("names", std::vector<std::string>{"a"}));
  }
  std::string raw = TestTree::Read(path);
  std::vector<nlohmann::json> lines = Lines(path);
  ASSERT_EQ(lines.size(), 3u) << raw;
  EXPECT_EQ(std::count(raw.begin(), raw.end(), '\n'), 3) << "a newline in a value stays escaped";
  for (const nlohmann::json& line : lines) {
    EXPECT_TRUE(line.contains("ts") && line["ts"].is_string());
    EXPECT_TRUE(line.contains("run") && line["run"].is_string());
    EXPECT_TRUE(line.contains("event"));
  }
  EXPECT_EQ(lines[0]["event"], "spawned");
  EXPECT_EQ(lines[0]["fingerprint"], "abc");
  EXPECT_EQ(lines[0]["grants"], 3);
  EXPECT_EQ(lines[1]["event"], "exited");
  EXPECT_EQ(lines[1]["code"], 7);
  EXPECT_EQ(lines[1]["by_corral"], false);
  EXPECT_EQ(lines[2]["text"], "line one\nline two");
  EXPECT_EQ(lines[0]["run"], lines[1]["run"]) << "one trail, one run id";
  // An ISO-8601 UTC timestamp.
  std::string ts = lines[0]["ts"];
  EXPECT_EQ(ts.size(), std::string("2025-01-01T00:00:00.000000Z").size()) << ts;
  EXPECT_EQ(ts.back(), 'Z');
}

TEST(AuditTrail, FileIsPrivateAndAppended) {
  TestTree tree;
  std::string path = tree.Join("audit.jsonl");
  {
    Result<AuditTrail> first = AuditTrail::ToFile(path);
    ASSERT_TRUE(first.ok());
    first->Record(AuditEvent("one"));
  }
  struct stat st = {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  {
    Result<AuditTrail> second = AuditTrail::ToFile(path);
    ASSERT_TRUE(second.ok());
    second->Record(AuditEvent("two"));
  }
  std::vector<nlohmann::json> lines = Lines(path);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0]["event"], "one");
  EXPECT_EQ(lines[1]["event"], "two");
}

TEST(AuditTrail, AnExistingFileIsMadePrivate) {
  TestTree tree;
  std::string path = tree.File("shared.jsonl", "");
  ASSERT_EQ(::chmod(path.c_str(), 0644), 0);
  ASSERT_TRUE(AuditTrail::ToFile(path).ok());
  struct stat st = {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
}

TEST(AuditTrail, ARelativePathIsRefused) {
  Result<AuditTrail> trail = AuditTrail::ToFile("audit.jsonl");
  ASSERT_FALSE(trail.ok());
  EXPECT_EQ(trail.error().code(), "audit_file_refused");
  EXPECT_NE(trail.error().message().find("relative path"), std::string::npos) << trail.error().message();
}

// In a directory: audit.jsonl, rotated to audit.1.jsonl once it reaches the
// cap, and a symlink planted at the name refused.
TEST(AuditTrail, InDirectoryRotatesAtTheCapAndRefusesASymlink) {
  TestTree tree;
  std::string dir = tree.Dir("state");
  UniqueFd fd(::open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  ASSERT_TRUE(fd);
  {
    Result<AuditTrail> trail = AuditTrail::InDirectory(fd.get(), dir);
    ASSERT_TRUE(trail.ok()) << trail.error().ToString();
    EXPECT_EQ(trail->file(), dir + "/audit.jsonl");
    trail->Record(AuditEvent("first"));
  }
  ASSERT_EQ(::truncate((dir + "/audit.jsonl").c_str(), kAuditFileCap), 0);
  {
    Result<AuditTrail> trail = AuditTrail::InDirectory(fd.get(), dir);
    ASSERT_TRUE(trail.ok()) << trail.error().ToString();
    trail->Record(AuditEvent("second"));
  }
  struct stat st = {};
  ASSERT_EQ(::stat((dir + "/audit.1.jsonl").c_str(), &st), 0);
  EXPECT_EQ(st.st_size, kAuditFileCap);
  std::vector<nlohmann::json> lines = Lines(dir + "/audit.jsonl");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0]["event"], "second");

  ASSERT_EQ(::unlink((dir + "/audit.jsonl").c_str()), 0);
  ASSERT_EQ(::symlink(tree.File("elsewhere", "").c_str(), (dir + "/audit.jsonl").c_str()), 0);
  Result<AuditTrail> refused = AuditTrail::InDirectory(fd.get(), dir);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code(), "audit_file_refused");
  EXPECT_EQ(TestTree::Read(tree.Join("elsewhere")), "");
}

TEST(AuditTrail, RefusesASymlinkedFile) {
  TestTree tree;
  std::string target = tree.File("elsewhere", "");
  tree.Symlink("audit.jsonl", target);
  Result<AuditTrail> trail = AuditTrail::ToFile(tree.Join("audit.jsonl"));
  ASSERT_FALSE(trail.ok());
  EXPECT_NE(trail.error().message().find("--audit"), std::string::npos);
}

// What a command could rewrite through another name, or what is not a file
// at all, is refused with the one code, before anything is written.
TEST(AuditTrail, RefusesASecondLinkADirectoryAndAFifo) {
  TestTree tree;
  std::string linked = tree.File("linked.jsonl", "");
  ASSERT_EQ(::link(linked.c_str(), tree.Join("other").c_str()), 0);
  std::string fifo = tree.Join("fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  ASSERT_EQ(::mkdir(tree.Join("dir").c_str(), 0700), 0);
  for (const std::string& path : {linked, fifo, tree.Join("dir")}) {
    Result<AuditTrail> trail = AuditTrail::ToFile(path);
    ASSERT_FALSE(trail.ok()) << path;
    EXPECT_EQ(trail.error().code(), "audit_file_refused") << path;
  }
  EXPECT_EQ(TestTree::Read(linked), "");
}

// Each record is one write(2), seen from the other end of a socket that
// keeps write boundaries: concurrent runs on one O_APPEND file can then
// never interleave their lines.
TEST(AuditTrail, EachRecordIsOneWrite) {
  int pair[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair), 0);
  UniqueFd reader(pair[0]);
  UniqueFd writer(pair[1]);
  UniqueFd saved(::fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 0));
  ASSERT_TRUE(saved);
  ASSERT_EQ(::dup2(writer.get(), STDERR_FILENO), STDERR_FILENO);
  {
    AuditTrail trail = AuditTrail::ToStderr();
    trail.Record(AuditEvent("spawned").Set("fingerprint", "abc"));
    trail.Record(AuditEvent("exited").Set("code", 0));
  }
  ASSERT_EQ(::dup2(saved.get(), STDERR_FILENO), STDERR_FILENO);
  writer.Reset();
  std::vector<std::string> writes;
  char buffer[64 * 1024];
  for (ssize_t n; (n = ::recv(reader.get(), buffer, sizeof buffer, MSG_DONTWAIT)) > 0;) {
    writes.emplace_back(buffer, static_cast<size_t>(n));
  }
  ASSERT_EQ(writes.size(), 2u) << "one write per record";
  for (const std::string& write : writes) {
    ASSERT_FALSE(write.empty());
    EXPECT_EQ(write.back(), '\n') << write;
    EXPECT_TRUE(nlohmann::json::parse(write, nullptr, false).is_object()) << write;
  }
}

// A trail at its cap is rotated only under <dir>/audit.lock: while another
// holder has it (judged from /proc/locks, where the opener waits), nothing
// is renamed; once it is released the rotation happens.
TEST(AuditTrail, RotationWaitsForTheLock) {
  TestTree tree;
  std::string dir = tree.Dir("state");
  UniqueFd fd(::open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  ASSERT_TRUE(fd);
  ASSERT_TRUE(AuditTrail::InDirectory(fd.get(), dir).ok());
  ASSERT_EQ(::truncate((dir + "/audit.jsonl").c_str(), kAuditFileCap), 0);
  UniqueFd lock(::open((dir + "/audit.lock").c_str(), O_RDWR | O_CLOEXEC));
  ASSERT_TRUE(lock);
  struct stat lock_st;
  ASSERT_EQ(::fstat(lock.get(), &lock_st), 0);
  ASSERT_EQ(::flock(lock.get(), LOCK_EX), 0);

  std::atomic<bool> opened = false;
  std::thread opener([&] {
    Result<AuditTrail> trail = AuditTrail::InDirectory(fd.get(), dir);
    if (trail.ok()) trail->Record(AuditEvent("after"));
    opened = true;
  });
  // A waiter on the lock's inode: "N: -> FLOCK ADVISORY WRITE pid maj:min:inode 0 EOF".
  const std::string inode = ":" + std::to_string(lock_st.st_ino);
  auto waiting = [&] {
    std::istringstream locks(TestTree::Read("/proc/locks"));
    for (std::string line; std::getline(locks, line);) {
      std::istringstream words(line);
      std::vector<std::string> word{std::istream_iterator<std::string>(words), std::istream_iterator<std::string>()};
      if (word.size() > 6 && word[1] == "->" && word[6].ends_with(inode)) return true;
    }
    return false;
  };
  bool waited = false;
  for (int i = 0; i < 2000 && !opened && !(waited = waiting()); ++i) ::usleep(5000);
  EXPECT_TRUE(waited) << "the trail was opened without waiting for the lock";
  EXPECT_FALSE(opened);
  EXPECT_NE(::access((dir + "/audit.1.jsonl").c_str(), F_OK), 0) << "rotated while another held the lock";
  ASSERT_EQ(::flock(lock.get(), LOCK_UN), 0);
  opener.join();
  struct stat rotated = {};
  ASSERT_EQ(::stat((dir + "/audit.1.jsonl").c_str(), &rotated), 0);
  EXPECT_EQ(rotated.st_size, kAuditFileCap);
  std::vector<nlohmann::json> lines = Lines(dir + "/audit.jsonl");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0]["event"], "after");
}

TEST(AuditTrail, RunIdsDifferAcrossTrails) {
  std::set<std::string> ids;
  for (int i = 0; i < 50; ++i) ids.insert(AuditTrail::Discard().run_id());
  EXPECT_EQ(ids.size(), 50u);
  EXPECT_NE(AuditTrail::ToStderr().run_id(), AuditTrail::Discard().run_id());
}

// One builder for every `failed` record: the code and the fingerprint when
// there are some, never an empty field.
TEST(FailedEvent, CarriesTheReasonTheDetailTheCodeAndThePolicy) {
  Error coded = Error(ErrorKind::kDenied, "approval: dangerous").WithCode("approval_denied");
  AuditEvent event = FailedEvent(coded);
  const nlohmann::json& refused = event.json();
  EXPECT_EQ(refused["event"], "failed");
  EXPECT_EQ(refused["source"], "corral");
  EXPECT_EQ(refused["reason"], "denied");
  EXPECT_EQ(refused["detail"], coded.ToString());
  EXPECT_EQ(refused["code"], "approval_denied");
  EXPECT_FALSE(refused.contains("policy"));

  AuditEvent ended = FailedEvent(Error(ErrorKind::kTimeout, "timeout"), "f00d");
  EXPECT_EQ(ended.json()["reason"], "timeout");
  EXPECT_EQ(ended.json()["policy"], "f00d");
  EXPECT_FALSE(ended.json().contains("code"));
}

TEST(FailureReasonFor, MapsEveryErrorKind) {
  const std::pair<ErrorKind, std::string_view> table[] = {
      {ErrorKind::kUsage, "usage"},           {ErrorKind::kConfig, "config"},
      {ErrorKind::kPolicy, "policy"},         {ErrorKind::kPinMismatch, "pin_mismatch"},
      {ErrorKind::kUnsupported, "unsupported"}, {ErrorKind::kNamespace, "namespace"},
      {ErrorKind::kMount, "mount"},           {ErrorKind::kHardening, "hardening"},
      {ErrorKind::kLandlock, "landlock"},     {ErrorKind::kSeccomp, "seccomp"},
      {ErrorKind::kExec, "exec"},             {ErrorKind::kNotFound, "not_found"},
      {ErrorKind::kTimeout, "timeout"},       {ErrorKind::kDenied, "denied"},
      {ErrorKind::kIo, "internal"},           {ErrorKind::kInternal, "internal"},
  };
  static_assert(std::size(table) == static_cast<size_t>(ErrorKind::kInternal) + 1, "a row per ErrorKind");
  for (const auto& [kind, reason] : table) {
    EXPECT_EQ(FailureReasonName(FailureReasonFor(kind)), reason) << ErrorKindName(kind);
  }
}

}  // namespace
}  // namespace corral
