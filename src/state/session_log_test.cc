#include "state/session_log.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "testing/gate_test_support.h"

namespace corral {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

using testing::kReadOnly;
using testing::kStart;
using testing::kWrite;
using testing::Lines;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

void WriteFile(const std::string& path, const std::string& text, mode_t mode = 0600) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  ASSERT_GE(fd, 0) << path;
  ASSERT_EQ(::write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
  ::close(fd);
  ASSERT_EQ(::chmod(path.c_str(), mode), 0);
}

mode_t ModeOf(const std::string& path) {
  struct stat info {};
  EXPECT_EQ(::stat(path.c_str(), &info), 0) << path;
  return info.st_mode & 07777;
}

class SessionLogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(scratch_.ok());
    dir_ = scratch_.Join("state/corral/sessions");
    Result<SessionStore> store = SessionStore::Open(dir_);
    ASSERT_TRUE(store.ok()) << store.error().ToString();
    store_.emplace(std::move(store).value());
  }
  std::string LogPath(const std::string& id) const { return dir_ + "/" + id + ".jsonl"; }

  testing::ScratchDir scratch_;
  std::string dir_;
  std::optional<SessionStore> store_;
};

// ---- ids and the directory ----

TEST(SessionId, AcceptsTheDocumentedAlphabet) {
  for (const char* id : {"a", "abc123", "A-b_c.1", "x.jsonl", "0123456789012345678901234567890123456789012345678901234567890123"}) {
    EXPECT_TRUE(ValidateSessionId(id).ok()) << id;
  }
}

TEST(SessionId, RefusesTraversalAndOddIds) {
  const std::string bad[] = {"", "..", "../etc/passwd", "a/b", ".hidden", "a b", "a\nb", std::string("a\0b", 3),
                             "caf\xc3\xa9", std::string(65, 'a'), "/abs"};
  for (const std::string& id : bad) {
    Status status = ValidateSessionId(id);
    ASSERT_FALSE(status.ok()) << id;
    EXPECT_EQ(status.error().kind(), ErrorKind::kUsage);
    EXPECT_EQ(status.error().code(), "session_id_invalid");
  }
}

TEST(SessionId, NewIdsAreValidAndDistinct) {
  Result<std::string> a = NewSessionId();
  Result<std::string> b = NewSessionId();
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_TRUE(ValidateSessionId(*a).ok());
  EXPECT_EQ(a->size(), 24u);
  EXPECT_NE(*a, *b);
}

TEST(SessionDir, XdgStateHomeThenHome) {
  EXPECT_EQ(SessionDirFor("/xdg", "/home/u").value(), "/xdg/corral/sessions");
  EXPECT_EQ(SessionDirFor("/xdg/", "/home/u").value(), "/xdg/corral/sessions");
  EXPECT_EQ(SessionDirFor(std::nullopt, "/home/u").value(), "/home/u/.local/state/corral/sessions");
  EXPECT_EQ(SessionDirFor("", "/home/u").value(), "/home/u/.local/state/corral/sessions");
  // A relative XDG_STATE_HOME is invalid by the XDG spec and ignored.
  EXPECT_EQ(SessionDirFor("relative", "/home/u").value(), "/home/u/.local/state/corral/sessions");
  Result<std::string> none = SessionDirFor(std::nullopt, "relative");
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().code(), "session_dir_unknown");
}

// ---- the store on disk ----

TEST_F(SessionLogTest, CreateWritesOneStartLineWithTheCwd) {
  Result<Session> session = store_->Create("s1", "/src/app");
  ASSERT_TRUE(session.ok()) << session.error().ToString();
  EXPECT_EQ(session->cwd(), "/src/app");
  EXPECT_FALSE(session->mode().has_value());
  std::string text = ReadFile(LogPath("s1"));
  EXPECT_THAT(text, StartsWith(R"({"v":1,"type":"session/start","ts":")"));
  EXPECT_THAT(text, HasSubstr(R"(Z","data":{"cwd":"/src/app"}})" "\n"));
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1);
}

TEST_F(SessionLogTest, FileIs0600InA0700DirectoryWhateverTheUmask) {
  mode_t old = ::umask(0);
  Result<SessionStore> store = SessionStore::Open(scratch_.Join("loose/sessions"));
  ASSERT_TRUE(store.ok()) << store.error().ToString();
  Result<Session> session = store->Create("s1", "/w");
  ::umask(old);
  ASSERT_TRUE(session.ok()) << session.error().ToString();
  EXPECT_EQ(ModeOf(scratch_.Join("loose/sessions")), 0700u);
  EXPECT_EQ(ModeOf(scratch_.Join("loose")), 0700u);
  EXPECT_EQ(ModeOf(session->path()), 0600u);
}

TEST_F(SessionLogTest, ModeEventsSurviveReloadAndTheLastWriteWins) {
  {
    Result<Session> session = store_->Create("s1", "/src/app");
    ASSERT_TRUE(session.ok());
    ASSERT_TRUE(session->RecordMode(Mode::kWorkspaceWrite, ModeSource::kUser).ok());
    ASSERT_TRUE(session->RecordMode(Mode::kDangerFullAccess, ModeSource::kDelegation).ok());
    ASSERT_TRUE(session->RecordMode(Mode::kReadOnly, ModeSource::kEscalation).ok());
    EXPECT_EQ(session->mode(), Mode::kReadOnly);
  }
  Result<Session> again = store_->Load("s1");
  ASSERT_TRUE(again.ok()) << again.error().ToString();
  EXPECT_EQ(again->cwd(), "/src/app");
  EXPECT_EQ(again->events().size(), 4u);
  EXPECT_EQ(again->mode(), Mode::kReadOnly);
  EXPECT_EQ(EffectiveSandboxMode(again->events())->source, ModeSource::kEscalation);
  // A change made after reload wins over everything before it.
  ASSERT_TRUE(again->RecordMode(Mode::kWorkspaceWrite, ModeSource::kUser).ok());
  EXPECT_EQ(store_->Load("s1")->mode(), Mode::kWorkspaceWrite);
}

TEST_F(SessionLogTest, TornTailIsDroppedByALoadThatLeavesTheFileUnchanged) {
  std::string torn = Lines({kStart, kReadOnly}) + std::string(kWrite).substr(0, 40);
  WriteFile(LogPath("s1"), torn);
  for (int load = 0; load < 2; ++load) {
    Result<Session> session = store_->Load("s1");
    ASSERT_TRUE(session.ok()) << session.error().ToString();
    EXPECT_EQ(session->events().size(), 2u);
    EXPECT_EQ(session->mode(), Mode::kReadOnly);
    EXPECT_EQ(ReadFile(LogPath("s1")), torn);  // reading never writes
  }
}

TEST_F(SessionLogTest, AppendCutsATornTailFirst) {
  WriteFile(LogPath("s1"), Lines({kStart, kReadOnly}) + std::string(kWrite).substr(0, 40));
  {
    Result<Session> session = store_->Load("s1");
    ASSERT_TRUE(session.ok()) << session.error().ToString();
    ASSERT_TRUE(session->RecordMode(Mode::kWorkspaceWrite, ModeSource::kUser).ok());
  }
  std::string text = ReadFile(LogPath("s1"));
  EXPECT_THAT(text, StartsWith(Lines({kStart, kReadOnly}) + R"({"v":1,"type":"sandbox/mode")"));
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 3);
  Result<ParsedSessionLog> parsed = ParseSessionLog(text, "s1.jsonl");
  ASSERT_TRUE(parsed.ok()) << parsed.error().ToString();
  EXPECT_FALSE(parsed->dropped_torn_line);
  Result<Session> again = store_->Load("s1");
  ASSERT_TRUE(again.ok()) << again.error().ToString();
  EXPECT_EQ(again->events().size(), 3u);
  EXPECT_EQ(again->mode(), Mode::kWorkspaceWrite);
}

TEST_F(SessionLogTest, AppendCutsATornTailLeftAfterTheLoad) {
  ASSERT_TRUE(store_->Create("s1", "/w").ok());
  Result<Session> session = store_->Load("s1");
  ASSERT_TRUE(session.ok()) << session.error().ToString();
  // Another process crashes mid-append after this one loaded.
  int fd = ::open(LogPath("s1").c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::write(fd, kWrite, 40), 40);
  ::close(fd);
  ASSERT_TRUE(session->RecordMode(Mode::kReadOnly, ModeSource::kUser).ok());
  Result<Session> again = store_->Load("s1");
  ASSERT_TRUE(again.ok()) << again.error().ToString();
  EXPECT_EQ(again->events().size(), 2u);
  EXPECT_EQ(again->mode(), Mode::kReadOnly);
  EXPECT_EQ(ReadFile(LogPath("s1")).back(), '\n');
}

TEST_F(SessionLogTest, GarbageLastLineWithNewlineIsRefusedWithFileAndLine) {
  std::string text = Lines({kStart, kReadOnly, "garbage"});
  WriteFile(LogPath("s1"), text);
  Result<Session> session = store_->Load("s1");
  ASSERT_FALSE(session.ok());
  EXPECT_EQ(session.error().code(), "session_log_corrupt");
  EXPECT_THAT(session.error().message(), StartsWith(LogPath("s1") + ":3: "));
  EXPECT_EQ(ReadFile(LogPath("s1")), text);
}

// Run in a forked child: it lowers RLIMIT_FSIZE and ignores SIGXFSZ for the
// whole process. Returns 0 when a short or failed write is cut back off and
// later appends still land as whole lines; otherwise the failing step.
int ShortWriteChild(Session& session, SessionStore& store) {
  if (::signal(SIGXFSZ, SIG_IGN) == SIG_ERR) return 10;
  std::string before = ReadFile(session.path());
  struct rlimit limit {};
  if (::getrlimit(RLIMIT_FSIZE, &limit) != 0) return 11;
  rlim_t unlimited = limit.rlim_cur;
  // Room for 10 more bytes: write(2) stops short. No room: it fails (EFBIG).
  for (rlim_t room : {rlim_t{10}, rlim_t{0}}) {
    limit.rlim_cur = before.size() + room;
    if (::setrlimit(RLIMIT_FSIZE, &limit) != 0) return 12;
    Status recorded = session.RecordMode(Mode::kDangerFullAccess, ModeSource::kUser);
    if (recorded.ok()) return 1;
    if (recorded.error().kind() != ErrorKind::kIo) return 2;
    if (room != 0 && recorded.error().message().find("short write") == std::string::npos) return 3;
    if (recorded.error().message().find("cut back to the last complete line") == std::string::npos) return 4;
    if (ReadFile(session.path()) != before) return 5;
    if (session.events().size() != 1) return 6;
  }
  limit.rlim_cur = unlimited;
  if (::setrlimit(RLIMIT_FSIZE, &limit) != 0) return 13;
  if (!session.RecordMode(Mode::kReadOnly, ModeSource::kUser).ok()) return 7;
  Result<Session> again = store.Load(session.id());
  if (!again.ok() || again->events().size() != 2 || again->mode() != Mode::kReadOnly) return 8;
  if (ReadFile(session.path()).substr(0, before.size()) != before) return 9;
  return 0;
}

TEST_F(SessionLogTest, ShortWriteIsCutBackAndLaterAppendsStayWhole) {
  Result<Session> session = store_->Create("s1", "/w");
  ASSERT_TRUE(session.ok()) << session.error().ToString();
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) ::_exit(ShortWriteChild(*session, *store_));
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 0) << "see ShortWriteChild for the code";
}

TEST_F(SessionLogTest, CorruptInteriorLineRefusesTheLoad) {
  WriteFile(LogPath("s1"), Lines({kStart, "garbage", kReadOnly}));
  Result<Session> session = store_->Load("s1");
  ASSERT_FALSE(session.ok());
  EXPECT_EQ(session.error().code(), "session_log_corrupt");
  EXPECT_THAT(session.error().message(), StartsWith(LogPath("s1") + ":2: "));
  // Refusing never rewrites the file.
  EXPECT_EQ(ReadFile(LogPath("s1")), Lines({kStart, "garbage", kReadOnly}));
}

TEST_F(SessionLogTest, EmptyLogIsRefused) {
  WriteFile(LogPath("s1"), "");
  Result<Session> session = store_->Load("s1");
  ASSERT_FALSE(session.ok());
  EXPECT_THAT(session.error().message(), HasSubstr("no session/start"));
}

TEST_F(SessionLogTest, CreateRefusesATakenIdAndLoadAMissingOne) {
  ASSERT_TRUE(store_->Create("s1", "/w").ok());
  Result<Session> twice = store_->Create("s1", "/elsewhere");
  ASSERT_FALSE(twice.ok());
  EXPECT_EQ(twice.error().code(), "session_exists");
  EXPECT_EQ(store_->Load("s1")->cwd(), "/w");
  Result<Session> missing = store_->Load("nope");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code(), "session_not_found");
}

TEST_F(SessionLogTest, CreateRefusesARelativeOrNonUtf8Cwd) {
  for (std::string cwd : {std::string("relative/dir"), std::string(""), std::string("/bad\xff"),
                          std::string("/nul\0x", 6)}) {
    Result<Session> session = store_->Create("s1", cwd);
    ASSERT_FALSE(session.ok()) << cwd;
    EXPECT_EQ(session.error().code(), "session_cwd_invalid");
  }
  EXPECT_NE(::access(LogPath("s1").c_str(), F_OK), 0);
}

TEST_F(SessionLogTest, TraversalIdNeverTouchesAPathOutsideTheDirectory) {
  Result<Session> session = store_->Create("../escaped", "/w");
  ASSERT_FALSE(session.ok());
  EXPECT_EQ(session.error().code(), "session_id_invalid");
  EXPECT_NE(::access((dir_ + "/../escaped.jsonl").c_str(), F_OK), 0);
  EXPECT_FALSE(store_->Load("../../etc/passwd").ok());
}

TEST_F(SessionLogTest, RefusesALogOthersCanWrite) {
  ASSERT_TRUE(store_->Create("s1", "/w").ok());
  for (mode_t mode : {0666, 0620, 0602}) {
    ASSERT_EQ(::chmod(LogPath("s1").c_str(), mode), 0);
    Result<Session> session = store_->Load("s1");
    ASSERT_FALSE(session.ok()) << std::oct << mode;
    EXPECT_EQ(session.error().code(), "session_log_unsafe");
    EXPECT_THAT(session.error().message(), HasSubstr("chmod 600 " + LogPath("s1")));
  }
  // Readable by others is not a write risk: allowed.
  ASSERT_EQ(::chmod(LogPath("s1").c_str(), 0644), 0);
  EXPECT_TRUE(store_->Load("s1").ok());
}

TEST_F(SessionLogTest, RefusesADirectoryOthersCanWrite) {
  ASSERT_TRUE(store_->Create("s1", "/w").ok());
  ASSERT_EQ(::chmod(dir_.c_str(), 0777), 0);
  for (auto attempt : {0, 1}) {
    Result<Session> session = attempt == 0 ? store_->Load("s1") : store_->Create("s2", "/w");
    ASSERT_FALSE(session.ok());
    EXPECT_EQ(session.error().code(), "session_log_unsafe");
    EXPECT_THAT(session.error().message(), HasSubstr("chmod 700 " + dir_));
  }
  Result<SessionStore> reopened = SessionStore::Open(dir_);
  ASSERT_FALSE(reopened.ok());
  EXPECT_THAT(reopened.error().message(), HasSubstr("mode 0777"));
}

TEST_F(SessionLogTest, RefusesALogOrDirectoryAnotherUidOwns) {
  ASSERT_TRUE(store_->Create("s1", "/w").ok());
  // Some other uid: 65534 (nobody) unless that is who runs the test.
  uid_t other = ::geteuid() == 65534 ? 65533 : 65534;
  if (::chown(LogPath("s1").c_str(), other, other) != 0) {
    // Not root, so nothing can be given away: exercise the same rule with a
    // directory another uid already owns, "/".
    EXPECT_EQ(errno, EPERM);
    struct stat root = {};
    ASSERT_EQ(::stat("/", &root), 0);
    ASSERT_NE(root.st_uid, ::geteuid());
    Result<SessionStore> foreign = SessionStore::Open("/");
    ASSERT_FALSE(foreign.ok());
    EXPECT_EQ(foreign.error().code(), "session_log_unsafe");
    EXPECT_THAT(foreign.error().message(), HasSubstr("owned by uid " + std::to_string(root.st_uid)));
    EXPECT_TRUE(store_->Load("s1").ok());  // the caller's own log is still fine
    return;
  }
  std::string owned_by = "owned by uid " + std::to_string(other);
  Result<Session> session = store_->Load("s1");
  ASSERT_FALSE(session.ok());
  EXPECT_EQ(session.error().code(), "session_log_unsafe");
  EXPECT_THAT(session.error().message(), HasSubstr(owned_by));
  EXPECT_THAT(session.error().message(), HasSubstr("chown " + std::to_string(::geteuid()) + " " + LogPath("s1")));

  ASSERT_EQ(::chown(LogPath("s1").c_str(), ::geteuid(), ::getegid()), 0);
  ASSERT_EQ(::chown(dir_.c_str(), other, other), 0);
  Result<SessionStore> reopened = SessionStore::Open(dir_);
  ASSERT_FALSE(reopened.ok());
  EXPECT_THAT(reopened.error().message(), HasSubstr(owned_by));
  EXPECT_FALSE(store_->Load("s1").ok());
}

TEST_F(SessionLogTest, RefusesSymlinks) {
  std::string target = scratch_.Join("elsewhere.jsonl");
  WriteFile(target, Lines({kStart}));
  ASSERT_EQ(::symlink(target.c_str(), LogPath("s1").c_str()), 0);
  Result<Session> session = store_->Load("s1");
  ASSERT_FALSE(session.ok());
  EXPECT_EQ(session.error().code(), "session_log_unsafe");

  std::string linked_dir = scratch_.Join("linked");
  ASSERT_EQ(::symlink(dir_.c_str(), linked_dir.c_str()), 0);
  Result<SessionStore> store = SessionStore::Open(linked_dir);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.error().code(), "session_log_unsafe");
}

TEST_F(SessionLogTest, ConcurrentAppendsLandAsWholeLines) {
  ASSERT_TRUE(store_->Create("s1", "/w").ok());
  Result<Session> first = store_->Load("s1");
  Result<Session> second = store_->Load("s1");
  ASSERT_TRUE(first.ok() && second.ok());
  auto writer = [](Session* session, Mode mode) {
    for (int i = 0; i < 200; ++i) ASSERT_TRUE(session->RecordMode(mode, ModeSource::kUser).ok());
  };
  std::thread a(writer, &first.value(), Mode::kReadOnly);
  std::thread b(writer, &second.value(), Mode::kWorkspaceWrite);
  a.join();
  b.join();
  Result<Session> after = store_->Load("s1");
  ASSERT_TRUE(after.ok()) << after.error().ToString();
  EXPECT_EQ(after->events().size(), 401u);
}

TEST_F(SessionLogTest, AnApprovalAllowedForTheSessionSurvivesAReload) {
  Result<Session> session = store_->Create("approvals", "/src/app");
  ASSERT_TRUE(session.ok()) << session.error().ToString();
  ASSERT_TRUE(session->RecordApproval({"command:git-push", Mode::kWorkspaceWrite, "/src/app"}).ok());
  EXPECT_EQ(session->allowed_classes(Mode::kWorkspaceWrite, "/src/app"), std::vector<std::string>{"command:git-push"});
  for (const ApprovalAllowData& bad : {ApprovalAllowData{"not ascii \x1b", Mode::kReadOnly, "/src/app"},
                                       ApprovalAllowData{"command:rm-rf", Mode::kReadOnly, "relative"}}) {
    Status refused = session->RecordApproval(bad);
    ASSERT_FALSE(refused.ok()) << bad.class_key;
    EXPECT_EQ(refused.error().kind(), ErrorKind::kUsage);
  }
  Result<Session> again = store_->Load("approvals");
  ASSERT_TRUE(again.ok()) << again.error().ToString();
  EXPECT_EQ(again->allowed_classes(Mode::kWorkspaceWrite, "/src/app"), std::vector<std::string>{"command:git-push"});
  EXPECT_EQ(again->allowed_classes(Mode::kDangerFullAccess, "/src/app"), std::vector<std::string>{});
  EXPECT_EQ(again->events().size(), 2u);
}

}  // namespace
}  // namespace corral
