#include "repair/sweep_journal.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string_view>
#include <nlohmann/json.hpp>

#include "base/hex.h"
#include "base/json_bytes.h"
#include "base/mutant.h"
#include "policy/path.h"

namespace corral {
namespace {

constexpr char kJournalName[] = "pending";
// The largest record written, and read: a run whose record would be larger
// is refused (RunConfined), so no record a recovery cannot read is ever left.
constexpr size_t kMaxRecord = 16 << 20;
constexpr int kSlots = 1024;
// The first byte of a record: the run is going (or was cut short), or its
// sweep is done.
constexpr char kActive = 'A';
constexpr char kDone = 'D';
constexpr char kRejected = 'R';  // unreadable or unsafe: kept for a person, never swept

std::string SlotName(int slot) { return "slot-" + std::to_string(slot) + ".json"; }

const char* StateName(ProtectedPath::State state) {
  return state == ProtectedPath::State::kSymlink ? "symlink" : "missing";
}

// Opens a slot file that must be the caller's private regular file.
Result<UniqueFd> OpenSlot(int dir_fd, const std::string& name, bool create) {
  int flags = O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | (create ? O_CREAT : 0);
  UniqueFd fd(::openat(dir_fd, name.c_str(), flags, 0600));
  if (!fd) return Error::FromErrno(ErrorKind::kIo, name + ": cannot open", "open", errno);
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return Error::FromErrno(ErrorKind::kIo, name + ": cannot stat", "fstat", errno);
  if (!S_ISREG(st.st_mode) || st.st_uid != ::geteuid() || (st.st_mode & 077) != 0 ||
      static_cast<size_t>(st.st_size) > kMaxRecord) {
    return Error(ErrorKind::kIo, name + ": not a private regular file of yours under 16 MiB");
  }
  return fd;
}

// What OpenSlot would accept, and empty.
bool IsEmptyPrivateSlot(const struct stat& st) {
  return S_ISREG(st.st_mode) && st.st_uid == ::geteuid() && (st.st_mode & 077) == 0 && st.st_size == 0;
}

// `text` as a JSON string: quotes, backslashes and control bytes escaped.
// Runs of bytes that need no escape are appended whole (a record is
// written on every run). Bytes that are not UTF-8 (a directory the command
// named "\xff") would make the whole record unreadable to the recovery's
// parser: such a text is written as json_bytes.h's {"bytes_hex": ...}
// object instead, which the recovery decodes.
void AppendJsonString(std::string& out, std::string_view text) {
  const bool ascii = std::all_of(text.begin(), text.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; });
  if (!ascii && !IsJsonUtf8(std::string(text)) && !MutantActive(Mutant::kJournalBytes)) {
    out += "{\"bytes_hex\":\"" + HexEncode(text) + "\"}";
    return;
  }
  out += '"';
  size_t plain = 0;  // the start of the run not yet appended
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c != '"' && c != '\\' && static_cast<unsigned char>(c) >= 0x20) continue;
    out.append(text.substr(plain, i - plain));
    plain = i + 1;
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned>(c));
      out += escaped;
    }
  }
  out.append(text.substr(plain));
  out += '"';
}

Result<ProtectedSet> ParsePaths(const nlohmann::json& paths) {
  ProtectedSet set;
  for (const nlohmann::json& item : paths) {
    if (!item.is_array() || (item.size() != 4 && item.size() != 5) ||
        !std::all_of(item.begin(), item.end(), [](const nlohmann::json& v) { return v.is_string(); })) {
      return Error(ErrorKind::kIo, "a path entry is malformed");
    }
    ProtectedPath entry;
    entry.path = item[1].get<std::string>();
    entry.root = item[2].get<std::string>();
    entry.link_target = item[3].get<std::string>();
    entry.state = item[0] == "symlink" ? ProtectedPath::State::kSymlink : ProtectedPath::State::kMissing;
    if (entry.path.empty() || entry.path[0] != '/' || entry.root.empty() || entry.root[0] != '/' ||
        entry.path == entry.root || !IsWithin(entry.path, entry.root)) {
      return Error(ErrorKind::kIo, "a path entry is not absolute or not inside its root");
    }
    if (item.size() == 5) {
      // The root's identity when the run started: recovery sweeps only the
      // directory that was the root then.
      unsigned long long dev = 0, ino = 0;
      char tail = 0;
      if (std::sscanf(item[4].get<std::string>().c_str(), "%llu:%llu%c", &dev, &ino, &tail) != 2) {
        return Error(ErrorKind::kIo, "a root identity is malformed");
      }
      PinnedPath root{entry.root, FileIdentity{static_cast<dev_t>(dev), static_cast<ino_t>(ino)},
                      FileType::kDirectory};
      bool known = std::any_of(set.roots.begin(), set.roots.end(), [&](const PinnedPath& r) { return r.path == root.path; });
      if (!known) set.roots.push_back(std::move(root));
    }
    set.paths.push_back(std::move(entry));
  }
  std::sort(set.paths.begin(), set.paths.end(),
            [](const ProtectedPath& a, const ProtectedPath& b) { return a.path < b.path; });
  return set;
}

}  // namespace

SweepJournalSlot& SweepJournalSlot::operator=(SweepJournalSlot&& other) noexcept {
  if (this != &other) {
    Release();
    fd_ = std::move(other.fd_);
    path_ = std::move(other.path_);
    size_ = other.size_;
  }
  return *this;
}

void SweepJournalSlot::Release() {
  if (!fd_) return;
  if (::ftruncate(fd_.get(), 0) != 0) {
    ssize_t ignored = ::pwrite(fd_.get(), &kDone, 1, 0);
    (void)ignored;
  }
  fd_.Reset();  // and with it the lock
  size_ = 0;
}

Result<SweepJournal> SweepJournal::Begin(const StateDir& state, const std::string& run, const ProtectedSet& set,
                                         SweepJournalSlot* kept) {
  // Written on every run, so built by hand, in place: [state, path, root,
  // link target, "dev:ino" of the root].
  std::string text = std::string(1, kActive) + "{\"version\":2,\"run\":";
  AppendJsonString(text, run);
  text += ",\"quarantine\":";  // for a person reading it: the recovery uses its own state directory
  AppendJsonString(text, state.path() + "/quarantine/" + run);
  text += ",\"paths\":[";
  const size_t header = text.size();
  text.reserve(header + set.paths.size() * 128);
  std::vector<std::string> root_ids;  // each root's "dev:ino", quoted, once
  for (const PinnedPath& root : set.roots) {
    root_ids.push_back(",\"" + std::to_string(root.id.dev) + ":" + std::to_string(root.id.ino) + "\"");
  }
  for (const ProtectedPath& entry : set.paths) {
    if (entry.state != ProtectedPath::State::kMissing && entry.state != ProtectedPath::State::kSymlink) continue;
    text += text.size() == header ? "[" : ",[";
    AppendJsonString(text, StateName(entry.state));
    for (const std::string* field : {&entry.path, &entry.root, &entry.link_target}) {
      text += ',';
      AppendJsonString(text, *field);
    }
    for (size_t i = 0; i < set.roots.size(); ++i) {
      if (set.roots[i].path != entry.root) continue;
      text += root_ids[i];
      break;
    }
    text += ']';
  }
  SweepJournal journal;
  if (text.size() == header) return journal;
  text += "]}\n";
  if (text.size() > kMaxRecord) {
    return Error(ErrorKind::kIo, "the sweep journal's record of this run would be " + std::to_string(text.size()) +
                                     " bytes, more than the " + std::to_string(kMaxRecord >> 20) +
                                     " MiB a recovery reads (the workspace's protected paths are too many or their "
                                     "names too long)");
  }

  // A kept slot whose directory was removed since is no record any
  // recovery would find: a slot is taken afresh.
  struct stat kept_st;
  if (kept != nullptr && kept->fd_ && (::fstat(kept->fd_.get(), &kept_st) != 0 || kept_st.st_nlink == 0)) {
    kept->Release();
  }
  if (kept != nullptr && kept->fd_) {
    // The kept slot's last record is done: this one goes over it.
    if (::pwrite(kept->fd_.get(), text.data(), text.size(), 0) != static_cast<ssize_t>(text.size()) ||
        (text.size() < kept->size_ && ::ftruncate(kept->fd_.get(), static_cast<off_t>(text.size())) != 0)) {
      Error failed = Error::FromErrno(ErrorKind::kIo, "cannot write the sweep journal", "pwrite", errno);
      kept->Release();
      return failed;
    }
    kept->size_ = text.size();
    journal.kept_ = kept;
    return journal;
  }
  CORRAL_ASSIGN_OR_RETURN(UniqueFd dir_fd, state.Subdir(kJournalName, StateDir::Create::kYes));
  const std::string dir = state.path() + "/" + kJournalName;
  // A slot that cannot be used (one a person must look at: a rejected
  // record, a file that is not a private one) is passed over, not the end
  // of the journal for every later run.
  std::optional<Error> unusable;
  for (int slot = 0; slot < kSlots; ++slot) {
    Result<UniqueFd> fd = OpenSlot(dir_fd.get(), SlotName(slot), true);
    if (!fd.ok() && fd.error().error_number() == EROFS) {
      // A state directory on a read-only filesystem (a read-only home) is
      // one that cannot be made: the run goes on without a journal.
      return std::move(fd).error().WithCode(kStateDirUnavailable);
    }
    if (!fd.ok()) {
      if (!unusable) unusable = std::move(fd).error();
      continue;
    }
    if (::flock(fd->get(), LOCK_EX | LOCK_NB) != 0) {
      if (errno == EWOULDBLOCK) continue;  // another corral's run
      return Error::FromErrno(ErrorKind::kIo, "cannot lock a sweep journal slot", "flock", errno);
    }
    // A record an earlier corral left active is the next recovery's: keep it.
    char first = 0;
    if (::pread(fd->get(), &first, 1, 0) == 1 && first == kActive) continue;
    if (first == kRejected) continue;  // kept for a person
    if (::pwrite(fd->get(), text.data(), text.size(), 0) != static_cast<ssize_t>(text.size()) ||
        ::ftruncate(fd->get(), static_cast<off_t>(text.size())) != 0) {
      // Emptied again (a full disk): a part of a record is no record.
      Error failed = Error::FromErrno(ErrorKind::kIo, "cannot write the sweep journal", "pwrite", errno);
      (void)::ftruncate(fd->get(), 0);
      return failed;
    }
    if (kept != nullptr) {
      kept->fd_ = std::move(fd).value();
      kept->path_ = dir + "/" + SlotName(slot);
      kept->size_ = text.size();
      journal.kept_ = kept;
      return journal;
    }
    journal.fd_ = std::move(fd).value();
    journal.path_ = dir + "/" + SlotName(slot);
    return journal;
  }
  if (unusable) return Error(ErrorKind::kIo, "no sweep journal slot in " + dir + " is free: " + unusable->ToString());
  return Error(ErrorKind::kIo, "every sweep journal slot in " + dir + " is in use");
}

void SweepJournal::Finish() {
  if (kept_ != nullptr) {
    // Done, and kept for the next run; a slot that cannot be marked is
    // emptied and released instead.
    if (MutantActive(Mutant::kJournalKeptDone)) {
      kept_ = nullptr;
      return;
    }
    if (kept_->fd_ && ::pwrite(kept_->fd_.get(), &kDone, 1, 0) != 1) kept_->Release();
    kept_ = nullptr;
    return;
  }
  if (!fd_) return;
  // An empty slot holds no record, so the next recovery need not open it.
  if (::ftruncate(fd_.get(), 0) != 0) {
    ssize_t ignored = ::pwrite(fd_.get(), &kDone, 1, 0);
    (void)ignored;
  }
  fd_.Reset();  // and with it the lock
}

std::vector<RecoveredSweep> RecoverInterruptedSweeps(const StateDir& state) {
  std::vector<RecoveredSweep> recovered;
  Result<UniqueFd> dir_fd = state.Subdir(kJournalName, StateDir::Create::kNo);
  if (!dir_fd.ok()) return recovered;  // no journal yet: nothing was interrupted
  const std::string dir = state.path() + "/" + kJournalName;
  for (int slot = 0; slot < kSlots; ++slot) {
    std::string name = SlotName(slot);
    struct stat st;
    if (::fstatat(dir_fd->get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      if (errno == ENOENT) break;  // slots are taken in order: none beyond
      continue;
    }
    // An empty private slot holds no record, active or not: a run that took
    // it writes its record (which makes it non-empty) before it spawns, and
    // holds the lock until it empties it again. Nothing to open.
    if (IsEmptyPrivateSlot(st)) continue;
    RecoveredSweep sweep;
    Result<UniqueFd> fd = OpenSlot(dir_fd->get(), name, false);
    if (!fd.ok()) {
      sweep.error = dir + "/" + fd.error().ToString();
      recovered.push_back(std::move(sweep));
      continue;
    }
    if (::flock(fd->get(), LOCK_EX | LOCK_NB) != 0) continue;  // that corral still runs
    std::string text(static_cast<size_t>(st.st_size), '\0');
    ssize_t n = ::pread(fd->get(), text.data(), text.size(), 0);
    if (n > 0 && text[0] == kDone) {
      // Swept, by a corral that marked it so instead of emptying it: empty
      // it now (it is locked), so later recoveries skip it unopened.
      if (::ftruncate(fd->get(), 0) != 0) continue;
    }
    if (n <= 0 || text[0] != kActive) continue;  // empty, or swept
    text.resize(static_cast<size_t>(n));
    nlohmann::json record = nlohmann::json::parse(text.substr(1), nullptr, false);
    if (!record.is_discarded()) record = DecodeBytes(std::move(record));
    Result<ProtectedSet> set = Error(ErrorKind::kIo, "not a sweep journal record");
    if (!record.is_discarded() && record.is_object() && record.value("version", 0) == 2 &&
        record["paths"].is_array() && record["run"].is_string() && record["quarantine"].is_string()) {
      set = ParsePaths(record["paths"]);
    }
    if (!set.ok()) {
      // Kept for a person to read, never tried again.
      ssize_t ignored = ::pwrite(fd->get(), &kRejected, 1, 0);
      (void)ignored;
      sweep.error = dir + "/" + name + ": " + set.error().message();
      recovered.push_back(std::move(sweep));
      continue;
    }
    sweep.run = record["run"].get<std::string>();
    try {
      sweep.findings = SweepProtected(*set, OpenSweepRoots(*set), QuarantineHome{state.fd(), state.path()}, sweep.run);
    } catch (const std::exception& e) {
      sweep.error = dir + "/" + name + ": the sweep failed: " + e.what();
    }
    if (!sweep.error.empty() || ::ftruncate(fd->get(), 0) != 0) {
      ssize_t ignored = ::pwrite(fd->get(), sweep.error.empty() ? &kDone : &kRejected, 1, 0);
      (void)ignored;
    }
    if (!sweep.error.empty()) {
      recovered.push_back(std::move(sweep));
      continue;
    }
    if (!sweep.findings.empty()) recovered.push_back(std::move(sweep));
  }
  return recovered;
}

}  // namespace corral
