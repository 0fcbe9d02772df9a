#include "repair/git_config_stage.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <cstring>
#include <map>
#include <set>
#include <thread>

#include "base/directory_names.h"
#include "base/mutant.h"
#include "base/unique_fd.h"
#include "policy/git_config_check.h"
#include "policy/git_files.h"

namespace corral {
namespace {

constexpr char kStageRoot[] = "git-config";
constexpr char kConfigName[] = "config";
constexpr char kLockName[] = "config.lock";
// Keys that say what the repository is: a fresh repository's (repair/
// fresh_repository.h) may hold them, but a run never changes them in an
// existing one (a host git would refuse it, or read it as bare).
const std::set<std::string> kFixedAtInit = {"core.repositoryformatversion", "core.bare", "extensions.objectformat"};
// How long a landing waits for git's lock on the real config.
constexpr int kLockAttempts = 200;
constexpr auto kLockPause = std::chrono::milliseconds(10);

std::string Errno(const std::string& what) { return what + ": " + std::strerror(errno); }

UniqueFd OpenAt2(int dir, const std::string& name, int flags, uint64_t resolve) {
  struct open_how how = {};
  // openat2 refuses O_NONBLOCK beside O_PATH (EINVAL); a path handle never blocks.
  how.flags = static_cast<uint64_t>(flags | O_NOFOLLOW | O_CLOEXEC | ((flags & O_PATH) != 0 ? 0 : O_NONBLOCK));
  how.resolve = resolve | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  return UniqueFd(static_cast<int>(::syscall(SYS_openat2, dir, name.c_str(), &how, sizeof how)));
}

bool Same(const struct stat& st, const FileIdentity& id) { return st.st_dev == id.dev && st.st_ino == id.ino; }

// Reads the regular file `fd` whole, at most kMaxGitFileBytes; "" or why not.
std::string ReadBounded(int fd, std::string* text) {
  struct stat st;
  if (::fstat(fd, &st) != 0) return Errno("fstat");
  if (!S_ISREG(st.st_mode)) return "it is not a regular file";
  if (st.st_size > static_cast<off_t>(kMaxGitFileBytes)) {
    return "it is larger than " + std::to_string(kMaxGitFileBytes) + " bytes";
  }
  text->clear();
  char buffer[8192];
  for (;;) {
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Errno("read");
    if (n == 0) return {};
    text->append(buffer, static_cast<size_t>(n));
    if (text->size() > kMaxGitFileBytes) return "it is larger than " + std::to_string(kMaxGitFileBytes) + " bytes";
  }
}

bool WriteAll(int fd, const std::string& text) {
  for (size_t done = 0; done < text.size();) {
    ssize_t n = ::pwrite(fd, text.data() + done, text.size() - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

// Each key's values in file order, by name ("remote.origin.url").
using Values = std::map<std::string, std::vector<GitConfigValue>>;

Values ValuesOf(const std::vector<GitConfigEntry>& entries) {
  Values values;
  for (const GitConfigEntry& entry : entries) values[entry.Name()].push_back({entry.value, entry.bare});
  return values;
}

// Each key's first entry, by name.
using FirstEntries = std::map<std::string, const GitConfigEntry*>;

FirstEntries FirstEntriesOf(const std::vector<GitConfigEntry>& entries) {
  FirstEntries first;
  for (const GitConfigEntry& entry : entries) first.emplace(entry.Name(), &entry);
  return first;
}

std::vector<GitConfigValue> ValuesFor(const Values& values, const std::string& name) {
  auto found = values.find(name);
  return found == values.end() ? std::vector<GitConfigValue>{} : found->second;
}

std::string Quoted(const std::string& value) {
  bool quote = value.empty() || value.front() == ' ' || value.front() == '\t' || value.back() == ' ' ||
               value.back() == '\t' || value.find_first_of("#;") != std::string::npos;
  std::string out = quote ? "\"" : "";
  for (char c : value) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '"': out += "\\\""; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      default: out += c;
    }
  }
  return quote ? out + "\"" : out;
}

std::string Line(const std::string& key, const GitConfigValue& value) {
  return "\t" + key + (value.bare ? "" : " = " + Quoted(value.value));
}

std::string Header(const std::string& section, const std::string& subsection) {
  if (subsection.empty()) return "[" + section + "]";
  std::string out = "[" + section + " \"";
  for (char c : subsection) {
    if (c == '\\' || c == '"') out += '\\';
    out += c;
  }
  return out + "\"]";
}

// <state>/quarantine/<run>/<path's directories>/<its name>: the run's copy,
// noted in <run>.moved for `corral quarantine`. "" or why not.
std::string Quarantine(const StateDir& state, const std::string& run, int stage, const std::string& path,
                       std::string* moved_to) {
  std::vector<std::string> names = {"quarantine", run};
  size_t last = path.rfind('/');
  for (size_t start = 1, slash; (slash = path.find('/', start)) != std::string::npos && slash <= last;
       start = slash + 1) {
    names.push_back(path.substr(start, slash - start));
  }
  UniqueFd dir(::fcntl(state.fd(), F_DUPFD_CLOEXEC, 0));
  std::string made = state.path();
  for (const std::string& name : names) {
    if (name.empty() || name == "." || name == "..") return "no quarantine directory for " + path;
    made += "/" + name;
    if (::mkdirat(dir.get(), name.c_str(), 0700) != 0 && errno != EEXIST) return Errno("making " + made);
    dir.Reset(::openat(dir.get(), name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!dir) return Errno("opening " + made);
  }
  std::string name = path.substr(last + 1);
  if (::renameat2(stage, kConfigName, dir.get(), name.c_str(), RENAME_NOREPLACE) != 0) {
    return Errno("moving the run's copy to " + made);
  }
  *moved_to = made + "/" + name;
  UniqueFd quarantine(::openat(state.fd(), "quarantine", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (quarantine) {
    std::string list = run + ".moved";
    UniqueFd fd(::openat(quarantine.get(), list.c_str(),
                         O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600));
    std::string line = path + '\0';
    if (fd) (void)!::write(fd.get(), line.data(), line.size());
  }
  return {};
}

// Removes everything the command (or git, or the landing) left in the
// staged directory `stage`, never following anything: a name that is not a
// directory is unlinked; a directory is emptied by moving its entries up
// into `stage` (renameat between descriptors, under fresh names), so no
// depth the command built makes corral hold a descriptor per level, and is
// then removed. A directory the command made unreadable gets its owner's
// bits back first (the command is gone by then; nothing races this). At
// most kCleanBudget steps: a tree larger than that stays, and is named.
constexpr size_t kCleanBudget = 1 << 20;

bool EmptyStage(int stage) {
  size_t steps = 0;
  size_t fresh = 0;
  for (;;) {
    std::vector<std::string> names = DirectoryNames(stage);
    if (names.empty()) return true;
    for (const std::string& name : names) {
      if (++steps > kCleanBudget) return false;
      struct stat st;
      if (::fstatat(stage, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
      if (!S_ISDIR(st.st_mode)) {
        ::unlinkat(stage, name.c_str(), 0);
        continue;
      }
      if (::unlinkat(stage, name.c_str(), AT_REMOVEDIR) == 0) continue;
      ::fchmodat(stage, name.c_str(), 0700, AT_SYMLINK_NOFOLLOW);
      UniqueFd sub = OpenAt2(stage, name, O_RDONLY | O_DIRECTORY, RESOLVE_BENEATH);
      if (!sub) return false;
      for (const std::string& child : DirectoryNames(sub.get())) {
        if (++steps > kCleanBudget) return false;
        struct stat child_st;
        // A directory moves to another parent only when it is writable (its "..").
        if (::fstatat(sub.get(), child.c_str(), &child_st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(child_st.st_mode)) {
          ::fchmodat(sub.get(), child.c_str(), 0700, AT_SYMLINK_NOFOLLOW);
        }
        for (;;) {
          std::string moved = ".corral-clean-" + std::to_string(fresh++);
          if (::renameat2(sub.get(), child.c_str(), stage, moved.c_str(), RENAME_NOREPLACE) == 0) break;
          if (errno != EEXIST) return false;
        }
      }
    }
  }
}

// Removes what the landing leaves in the staged directory (the command's and
// git's leftovers included), then the directory, then the run's, when empty.
void RemoveStage(const StateDir& state, const StagedGitConfig& staged, int stage, GitConfigLanding* landing) {
  if (!EmptyStage(stage)) {
    landing->error += std::string(landing->error.empty() ? "" : "; ") + "what the run left in " +
                      staged.stage.path + " could not all be removed";
  }
  ::unlinkat(state.fd(), staged.stage_relative.c_str(), AT_REMOVEDIR);
  std::string run_dir = staged.stage_relative.substr(0, staged.stage_relative.rfind('/'));
  ::unlinkat(state.fd(), run_dir.c_str(), AT_REMOVEDIR);
}

// The real config's new text, or why nothing of the run's lands. Fills
// `landing` with the keys landed and those that changed meanwhile.
Result<std::string> Merge(const StagedGitConfig& staged, const std::string& copy, const Values& base_values, const Values& copy_values,
                          const FirstEntries& base_first, const FirstEntries& copy_first,
                          const std::vector<std::string>& safe_changes,
                          const std::string& current, GitConfigLanding* landing) {
  if ((current == staged.base || MutantActive(Mutant::kGitConfigMerge)) && landing->refused.empty()) {
    landing->landed = safe_changes;
    return copy;
  }
  CORRAL_ASSIGN_OR_RETURN(std::vector<GitConfigEntry> current_entries, ParseGitConfig(current));
  Values current_values = ValuesOf(current_entries);
  std::vector<GitConfigChange> changes;
  for (const std::string& name : safe_changes) {
    if (ValuesFor(current_values, name) != ValuesFor(base_values, name)) {
      landing->conflicts.push_back(name);
      continue;
    }
    // The section, subsection and key of `name`, from an entry that has it.
    auto found = copy_first.find(name);
    if (found == copy_first.end()) found = base_first.find(name);
    if (found == base_first.end()) return Error(ErrorKind::kInternal, name + " is in neither config");
    const GitConfigEntry* entry = found->second;
    changes.push_back({entry->section, entry->subsection, entry->key, ValuesFor(copy_values, name)});
    landing->landed.push_back(name);
  }
  return ApplyGitConfigChanges(current, changes);
}

GitConfigLanding Land(const StagedGitConfig& staged, const StateDir& state, const std::string& run) {
  GitConfigLanding landing;
  landing.path = staged.path;
  // The command may have taken its directory's bits away (`chmod 0`): its
  // owner's come back first. The path is corral's own down to the staged
  // directory, which no process of the run can reach any more.
  ::fchmodat(state.fd(), staged.stage_relative.c_str(), 0700, AT_SYMLINK_NOFOLLOW);
  UniqueFd stage = OpenAt2(state.fd(), staged.stage_relative, O_PATH | O_DIRECTORY, RESOLVE_BENEATH);
  struct stat st;
  if (!stage || ::fstat(stage.get(), &st) != 0 || !Same(st, staged.stage.id)) {
    landing.error = "the run's copy of the config cannot be found in " + staged.stage.path;
    return landing;
  }
  auto keep = [&](GitConfigLanding& out) {
    std::string why = Quarantine(state, run, stage.get(), staged.path, &out.quarantined);
    if (!why.empty()) out.error += (out.error.empty() ? "" : "; ") + why;
    RemoveStage(state, staged, stage.get(), &out);
  };
  std::string copy;
  UniqueFd copy_fd = OpenAt2(stage.get(), kConfigName, O_RDONLY, RESOLVE_BENEATH);
  if (MutantActive(Mutant::kGitConfigFollow)) {
    copy_fd.Reset(::openat(stage.get(), kConfigName, O_RDONLY | O_CLOEXEC));
    std::string all;
    char buffer[8192];
    for (ssize_t n; copy_fd && (n = ::read(copy_fd.get(), buffer, sizeof buffer)) > 0;) all.append(buffer, static_cast<size_t>(n));
    copy = copy_fd ? all : copy;
  }
  std::string unreadable = MutantActive(Mutant::kGitConfigFollow) ? (copy_fd ? "" : Errno("open"))
                           : copy_fd                                ? ReadBounded(copy_fd.get(), &copy)
                           : errno == ELOOP                         ? "it is a symlink"
                                                                    : Errno("open");
  copy_fd.Reset();
  if (!unreadable.empty()) {
    landing.error = "the run's copy of the config cannot be read (" + unreadable + "): nothing of it landed";
    // Only a regular file is kept for `corral quarantine restore`: a
    // symlink put back over the real config would make the next host git
    // read whatever the command pointed it at (a directory or a FIFO is no
    // config either).
    struct stat copy_st;
    if (::fstatat(stage.get(), kConfigName, &copy_st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(copy_st.st_mode)) {
      keep(landing);
    } else {
      RemoveStage(state, staged, stage.get(), &landing);
    }
    return landing;
  }
  if (copy == staged.base) {
    RemoveStage(state, staged, stage.get(), &landing);
    return landing;
  }
  Result<std::vector<GitConfigEntry>> copy_entries = ParseGitConfig(copy);
  if (!copy_entries) {
    landing.error = "the run's copy of the config cannot be read exactly as git would (" +
                    copy_entries.error().message() + "): nothing of it landed";
    keep(landing);
    return landing;
  }
  Result<std::vector<GitConfigEntry>> base_entries = ParseGitConfig(staged.base);
  if (!base_entries) {
    landing.error = "the staged config no longer parses: nothing landed";
    keep(landing);
    return landing;
  }
  Values base_values = ValuesOf(*base_entries);
  Values copy_values = ValuesOf(*copy_entries);
  // In the copy's order (a new section gets its keys as git wrote them),
  // then those the run removed.
  // Each step below is a lookup: a copy of 1 MiB may hold tens of thousands
  // of keys, and the landing must not take quadratic time over them.
  FirstEntries base_first = FirstEntriesOf(*base_entries);
  FirstEntries copy_first = FirstEntriesOf(*copy_entries);
  // Why a key the copy holds is unsafe, from the first of its values that is.
  std::map<std::string, std::string> copy_unsafe;
  for (const GitConfigEntry& entry : *copy_entries) {
    std::string& why = copy_unsafe[entry.Name()];
    if (why.empty()) why = UnsafeGitConfigEntry(entry);
  }
  std::vector<std::string> names;
  std::set<std::string> seen;
  for (const auto* list : {&*copy_entries, &*base_entries}) {
    for (const GitConfigEntry& entry : *list) {
      std::string name = entry.Name();
      if (seen.insert(name).second) names.push_back(std::move(name));
    }
  }
  std::vector<std::string> safe_changes;
  for (const std::string& name : names) {
    if (ValuesFor(base_values, name) == ValuesFor(copy_values, name)) continue;
    std::string why = copy_unsafe.contains(name) ? copy_unsafe.at(name) : "";
    if (why.empty() && kFixedAtInit.contains(name)) {
      const GitConfigEntry* entry = copy_first.contains(name) ? copy_first.at(name) : base_first.at(name);
      why = name + (copy_first.contains(name) ? " (line " + std::to_string(entry->line) + ")" : "") +
            " is on the safe list only for a repository the run creates: changed in an existing one, a host git "
            "would no longer read the repository as it is";
    }
    if (!copy_values.contains(name)) {  // removed: only the key's name matters
      GitConfigEntry entry = *base_first.at(name);
      entry.value = "removed";
      why = UnsafeGitConfigEntry(entry);
    }
    if (!why.empty() && !MutantActive(Mutant::kGitConfigSafeKeys)) {
      landing.refused.push_back(why);
    } else {
      safe_changes.push_back(name);
    }
  }
  if (safe_changes.empty()) {
    keep(landing);
    return landing;
  }

  // The real config, from its gitdir, under git's lock.
  UniqueFd gitdir = OpenAt2(AT_FDCWD, staged.gitdir, O_PATH | O_DIRECTORY, 0);
  if (!gitdir || ::fstat(gitdir.get(), &st) != 0 || !Same(st, staged.gitdir_id)) {
    landing.error = staged.gitdir + " is no longer the directory the run started with: nothing landed";
    keep(landing);
    return landing;
  }
  UniqueFd lock;
  for (int attempt = 0; attempt < kLockAttempts && !lock; ++attempt) {
    lock.Reset(::openat(gitdir.get(), kLockName, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!lock && errno != EEXIST) break;
    if (!lock) std::this_thread::sleep_for(kLockPause);
  }
  if (!lock) {
    landing.error = errno == EEXIST
                        ? staged.gitdir + "/" + kLockName + " stayed there for " +
                              std::to_string(kLockAttempts * kLockPause.count() / 1000) +
                              " seconds (corral did not make it: a git still running, or a file the run left; "
                              "look at it before you remove it, never move it over the config): nothing landed"
                        : Errno("cannot take " + staged.gitdir + "/" + kLockName) + ": nothing landed";
    keep(landing);
    return landing;
  }
  auto unlock = [&] { ::unlinkat(gitdir.get(), kLockName, 0); };
  std::string current;
  UniqueFd real = OpenAt2(gitdir.get(), kConfigName, O_RDWR, RESOLVE_BENEATH);
  std::string why = !real ? (errno == ELOOP ? "it is a symlink" : Errno("open")) : ReadBounded(real.get(), &current);
  if (why.empty() && (::fstat(real.get(), &st) != 0 || !Same(st, staged.config_id) || st.st_nlink != 1)) {
    why = "it is not the file the run started with (or it has other links)";
  }
  if (!why.empty()) {
    unlock();
    landing.error = staged.path + " cannot be updated (" + why + "): nothing landed";
    keep(landing);
    return landing;
  }
  Result<std::string> merged = Merge(staged, copy, base_values, copy_values, base_first,
                                     copy_first, safe_changes, current, &landing);
  // Read back: exactly the values intended, nothing else.
  if (merged) {
    Result<std::vector<GitConfigEntry>> check = ParseGitConfig(*merged);
    Result<std::vector<GitConfigEntry>> now = ParseGitConfig(current);
    bool exact = check && (now || current == staged.base);
    if (exact) {
      Values expected = now ? ValuesOf(*now) : base_values;
      for (const std::string& name : landing.landed) {
        expected.erase(name);
        if (copy_values.contains(name)) expected[name] = copy_values.at(name);
      }
      exact = ValuesOf(*check) == expected;
    }
    if (!exact) merged = Error(ErrorKind::kInternal, "the merged config does not read back as intended");
  }
  if (!merged) {
    unlock();
    landing.landed.clear();
    landing.error = staged.path + ": " + merged.error().message() + ": nothing landed";
    keep(landing);
    return landing;
  }
  if (!landing.landed.empty()) {
    // The real config is written in place: its blocks are taken first
    // (without changing its size), so a full disk, which the command can
    // arrange, fails before any byte of it changed, not halfway through the
    // new text. A filesystem that cannot reserve them is written as before.
    auto nothing_landed = [&](const std::string& why) {
      unlock();
      landing.error = staged.path + " cannot be updated (" + why + "): nothing landed";
      landing.landed.clear();
      keep(landing);
      return landing;
    };
    if (!MutantActive(Mutant::kGitConfigNoReserve) &&
        ::fallocate(real.get(), FALLOC_FL_KEEP_SIZE, 0, static_cast<off_t>(merged->size())) != 0 &&
        errno != EOPNOTSUPP) {
      return nothing_landed(Errno("no room for the new text: fallocate"));
    }
    ::fchmod(lock.get(), st.st_mode & 0777);
    if (!WriteAll(lock.get(), *merged) || ::fsync(lock.get()) != 0) {
      return nothing_landed(Errno("writing " + std::string(kLockName)));
    }
    if (!WriteAll(real.get(), *merged) || ::ftruncate(real.get(), static_cast<off_t>(merged->size())) != 0 ||
        ::fsync(real.get()) != 0) {
      landing.error = Errno("writing " + staged.path) + " (" + staged.gitdir + "/" + kLockName +
                      " holds the whole new text)";
      landing.landed.clear();
      keep(landing);
      return landing;
    }
  }
  unlock();
  if (!landing.refused.empty() || !landing.conflicts.empty()) {
    keep(landing);
  } else {
    RemoveStage(state, staged, stage.get(), &landing);
  }
  return landing;
}

}  // namespace

Result<std::string> ApplyGitConfigChanges(const std::string& current, const std::vector<GitConfigChange>& changes) {
  CORRAL_ASSIGN_OR_RETURN(std::vector<GitConfigEntry> entries, ParseGitConfig(current));
  std::vector<std::string> lines;
  for (size_t start = 0; start < current.size();) {
    size_t end = current.find('\n', start);
    if (end == std::string::npos) end = current.size();
    lines.push_back(current.substr(start, end - start));
    start = end + 1;
  }
  std::vector<bool> dropped(lines.size(), false);
  std::vector<std::pair<std::string, std::string>> appended;  // a new section's header, its lines
  std::map<std::string, size_t> block_of;                      // its index, by header
  std::map<std::string, std::vector<int>> lines_of;            // each key's lines, by name
  for (const GitConfigEntry& entry : entries) lines_of[entry.Name()].push_back(entry.line);
  for (const GitConfigChange& change : changes) {
    GitConfigEntry named;
    named.section = change.section;
    named.subsection = change.subsection;
    named.key = change.key;
    std::string name = named.Name();
    std::vector<int> at = lines_of.contains(name) ? lines_of.at(name) : std::vector<int>{};
    if (at.size() == change.values.size()) {
      for (size_t i = 0; i < at.size(); ++i) lines[static_cast<size_t>(at[i] - 1)] = Line(change.key, change.values[i]);
      continue;
    }
    for (int line : at) dropped[static_cast<size_t>(line - 1)] = true;
    if (change.values.empty()) continue;
    std::string header = Header(change.section, change.subsection);
    auto [index, added] = block_of.emplace(header, appended.size());
    if (added) appended.push_back({header, ""});
    for (const GitConfigValue& value : change.values) appended[index->second].second += Line(change.key, value) + "\n";
  }
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (!dropped[i]) out += lines[i] + "\n";
  }
  for (const auto& [header, body] : appended) out += header + "\n" + body;
  return out;
}

std::vector<StagedGitConfig> StageGitConfigs(const ProtectedSet& set, const StateDir& state, const std::string& run,
                                             std::vector<std::string>* notes) {
  std::vector<StagedGitConfig> staged;
  if (!state.valid()) return staged;
  for (const ProtectedPath& entry : set.paths) {
    if (!entry.path.ends_with("/.git/config")) continue;
    if (entry.state != ProtectedPath::State::kFile) continue;
    std::string why;
    StagedGitConfig config;
    config.path = entry.path;
    config.gitdir = entry.path.substr(0, entry.path.rfind('/'));
    config.config_id = entry.id;
    UniqueFd gitdir = OpenAt2(AT_FDCWD, config.gitdir, O_PATH | O_DIRECTORY, 0);
    struct stat st;
    if (staged.size() == kMaxStagedGitConfigs) {
      why = "more than " + std::to_string(kMaxStagedGitConfigs) + " repositories";
    } else if (!gitdir || ::fstat(gitdir.get(), &st) != 0) {
      why = Errno("opening " + config.gitdir);
    } else {
      config.gitdir_id = {st.st_dev, st.st_ino};
      UniqueFd fd = OpenAt2(gitdir.get(), kConfigName, O_RDONLY, RESOLVE_BENEATH);
      why = !fd ? Errno("open") : ReadBounded(fd.get(), &config.base);
      if (why.empty() && (::fstat(fd.get(), &st) != 0 || !Same(st, entry.id) || st.st_nlink != 1)) {
        why = "it changed since discovery, or has other links";
      }
      Result<std::vector<GitConfigEntry>> parsed = why.empty() ? ParseGitConfig(config.base)
                                                               : Result<std::vector<GitConfigEntry>>(std::vector<GitConfigEntry>{});
      if (!parsed) why = "corral's strict reader cannot read it (" + parsed.error().message() + ")";
    }
    std::string n = std::to_string(staged.size());
    config.stage_relative = std::string(kStageRoot) + "/" + run + "/" + n;
    Result<UniqueFd> dir = why.empty() ? state.Subdir(config.stage_relative, StateDir::Create::kYes)
                                       : Result<UniqueFd>(Error(ErrorKind::kIo, why));
    if (why.empty() && !dir) why = dir.error().message();
    if (why.empty()) {
      UniqueFd file(::openat(dir->get(), kConfigName, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
      if (!file || !WriteAll(file.get(), config.base) || ::fstat(dir->get(), &st) != 0) why = Errno("writing the copy");
    }
    if (!why.empty()) {
      notes->push_back(entry.path + " stays read-only (" + why + ")");
      continue;
    }
    config.stage = PinnedPath{state.path() + "/" + config.stage_relative, FileIdentity{st.st_dev, st.st_ino},
                              FileType::kDirectory};
    config.view_dir = std::string(kGitConfigViewDir) + "/" + n;
    staged.push_back(std::move(config));
  }
  return staged;
}

std::vector<GitConfigLanding> LandGitConfigs(const std::vector<StagedGitConfig>& staged, const StateDir& state,
                                             const std::string& run) {
  std::vector<GitConfigLanding> landings;
  for (const StagedGitConfig& config : staged) {
    GitConfigLanding landing = Land(config, state, run);
    if (!landing.landed.empty() || !landing.refused.empty() || !landing.conflicts.empty() || !landing.error.empty()) {
      landings.push_back(std::move(landing));
    }
  }
  return landings;
}

}  // namespace corral
