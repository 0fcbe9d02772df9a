#include "exec/sweep_journal.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "base/unique_fd.h"

namespace corral {
namespace {

constexpr size_t kMaxRecord = 1 << 20;

// Field 22 of /proc/<pid>/stat: when the process started, in clock ticks
// since boot. With the pid, it names one process even after pid reuse. A
// zombie (state Z or X, field 3) has ended: empty, as for no process.
std::string StartTime(pid_t pid) {
  UniqueFd fd(::open(("/proc/" + std::to_string(pid) + "/stat").c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return {};
  char buffer[1024];
  ssize_t n = ::read(fd.get(), buffer, sizeof buffer - 1);
  if (n <= 0) return {};
  std::string stat(buffer, static_cast<size_t>(n));
  size_t field = stat.rfind(')');  // the command name may hold spaces and parentheses
  if (field == std::string::npos || field + 2 >= stat.size()) return {};
  if (stat[field + 2] == 'Z' || stat[field + 2] == 'X') return {};
  // After ") " come fields 3, 4, ...: skip 19 of them to reach field 22.
  size_t pos = field + 2;
  for (int i = 3; i < 22 && pos != std::string::npos; ++i) {
    pos = stat.find(' ', pos);
    if (pos != std::string::npos) ++pos;
  }
  if (pos == std::string::npos) return {};
  return stat.substr(pos, stat.find(' ', pos) - pos);
}

const char* StateName(ProtectedPath::State state) {
  return state == ProtectedPath::State::kSymlink ? "symlink" : "missing";
}

Result<std::string> ReadRecord(int dir_fd, const char* name) {
  UniqueFd fd(::openat(dir_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (!fd) return Error::FromErrno(ErrorKind::kIo, "cannot open", "open", errno);
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return Error::FromErrno(ErrorKind::kIo, "cannot stat", "fstat", errno);
  if (!S_ISREG(st.st_mode) || st.st_uid != ::geteuid() || (st.st_mode & 077) != 0 ||
      static_cast<size_t>(st.st_size) > kMaxRecord) {
    return Error(ErrorKind::kIo, "not a private regular file of yours under 1 MiB");
  }
  std::string text(static_cast<size_t>(st.st_size), '\0');
  ssize_t n = ::read(fd.get(), text.data(), text.size());
  if (n != static_cast<ssize_t>(text.size())) return Error(ErrorKind::kIo, "short read");
  return text;
}

}  // namespace

std::string SweepJournalDir(const std::string& home) {
  const char* state = ::getenv("XDG_STATE_HOME");
  std::string base = state != nullptr && state[0] == '/' ? std::string(state) : home + "/.local/state";
  return base + "/corral/pending";
}

Result<std::string> WriteSweepJournal(const std::string& dir, const std::string& run, const ProtectedSet& set,
                                      const std::string& quarantine) {
  nlohmann::json paths = nlohmann::json::array();
  for (const ProtectedPath& entry : set.paths) {
    if (entry.state != ProtectedPath::State::kMissing && entry.state != ProtectedPath::State::kSymlink) continue;
    paths.push_back({{"path", entry.path},
                     {"state", StateName(entry.state)},
                     {"link_target", entry.link_target},
                     {"root", entry.root}});
  }
  if (paths.empty()) return std::string();
  pid_t self = ::getpid();
  nlohmann::json record = {{"version", 1},      {"run", run},
                           {"pid", self},       {"start", StartTime(self)},
                           {"quarantine", quarantine}, {"paths", paths}};
  // The directory chain, private to the caller (the state directory is
  // corral's own, hidden from every sandbox).
  std::string prefix;
  size_t start = 1;
  while (start <= dir.size()) {
    size_t end = std::min(dir.find('/', start), dir.size());
    prefix = dir.substr(0, end);
    if (::mkdir(prefix.c_str(), 0700) != 0 && errno != EEXIST) {
      return Error::FromErrno(ErrorKind::kIo, "cannot create the sweep journal directory " + prefix, "mkdir", errno);
    }
    start = end + 1;
  }
  std::string path = dir + "/" + run + ".json";
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!fd) return Error::FromErrno(ErrorKind::kIo, "cannot write the sweep journal " + path, "open", errno);
  std::string text = record.dump() + "\n";
  if (::write(fd.get(), text.data(), text.size()) != static_cast<ssize_t>(text.size())) {
    ::unlink(path.c_str());
    return Error::FromErrno(ErrorKind::kIo, "cannot write the sweep journal " + path, "write", errno);
  }
  return path;
}

void RemoveSweepJournal(const std::string& path) {
  if (!path.empty()) ::unlink(path.c_str());
}

std::vector<RecoveredSweep> RecoverInterruptedSweeps(const std::string& dir) {
  std::vector<RecoveredSweep> recovered;
  UniqueFd dir_fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!dir_fd) return recovered;  // no journal yet: nothing was interrupted
  DIR* stream = ::fdopendir(::dup(dir_fd.get()));
  if (stream == nullptr) return recovered;
  std::vector<std::string> names;
  while (const struct dirent* entry = ::readdir(stream)) {
    std::string name = entry->d_name;
    if (name.size() > 5 && name.ends_with(".json")) names.push_back(name);
  }
  ::closedir(stream);

  for (const std::string& name : names) {
    RecoveredSweep sweep;
    sweep.run = name.substr(0, name.size() - 5);
    Result<std::string> text = ReadRecord(dir_fd.get(), name.c_str());
    nlohmann::json record;
    if (text.ok()) record = nlohmann::json::parse(*text, nullptr, false);
    if (!text.ok() || record.is_discarded() || !record.is_object() || record.value("version", 0) != 1 ||
        !record["paths"].is_array() || !record["pid"].is_number_integer() || !record["start"].is_string() ||
        !record["quarantine"].is_string()) {
      sweep.error = dir + "/" + name + ": " + (text.ok() ? "not a sweep journal record" : text.error().ToString());
      recovered.push_back(std::move(sweep));
      continue;
    }
    pid_t pid = record["pid"].get<pid_t>();
    if (pid > 0 && StartTime(pid) == record["start"].get<std::string>()) continue;  // that corral still runs

    ProtectedSet set;
    bool valid = true;
    for (const nlohmann::json& item : record["paths"]) {
      if (!item.is_object() || !item["path"].is_string() || !item["root"].is_string() ||
          !item["link_target"].is_string() || !item["state"].is_string()) {
        valid = false;
        break;
      }
      ProtectedPath entry;
      entry.path = item["path"].get<std::string>();
      entry.root = item["root"].get<std::string>();
      entry.link_target = item["link_target"].get<std::string>();
      entry.state = item["state"] == "symlink" ? ProtectedPath::State::kSymlink : ProtectedPath::State::kMissing;
      if (entry.path.empty() || entry.path[0] != '/' || entry.root.empty() || entry.root[0] != '/') {
        valid = false;
        break;
      }
      set.paths.push_back(std::move(entry));
    }
    if (!valid) {
      sweep.error = dir + "/" + name + ": a path entry is malformed";
      recovered.push_back(std::move(sweep));
      continue;
    }
    std::sort(set.paths.begin(), set.paths.end(),
              [](const ProtectedPath& a, const ProtectedPath& b) { return a.path < b.path; });
    sweep.findings = SweepProtected(set, record["quarantine"].get<std::string>(), sweep.run);
    ::unlinkat(dir_fd.get(), name.c_str(), 0);
    if (!sweep.findings.empty()) recovered.push_back(std::move(sweep));
  }
  return recovered;
}

}  // namespace corral
