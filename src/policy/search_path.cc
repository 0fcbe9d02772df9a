#include "policy/search_path.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <optional>

#include "base/directory_names.h"
#include "base/unique_fd.h"
#include "policy/listing_cache.h"
#include "policy/path.h"
#include "policy/toolchains.h"

namespace corral {
namespace {

// The most names a warning spells out before "and N more".
constexpr size_t kNamesShown = 3;
// Names asked of a PATH directory one stat each before it is listed instead.
constexpr size_t kAskedBeforeListing = 16;

bool IsExecutableFile(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

// The names in a directory (but "." and ".."), sorted, read once; nullptr
// when it cannot be listed (search permission without read), or holds more
// than `most` names: each name is then looked at on its own. Through the
// listing cache when one is in place (policy/listing_cache.h): a directory
// whose (device, inode, ctime) is remembered is not read, and its names are
// the cache's own (not copied: /usr/bin's are a few thousand). They stay
// put until the cache is saved, after the comparison, since a comparison
// lists each directory once and so never remembers one it found. One read
// is kept in `storage`, and remembered once its ctime lies kListingSettle
// before `began`.
const std::vector<std::string>* ListNames(const std::string& dir, const struct timespec& began, size_t most,
                                          std::vector<std::string>* storage) {
  UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd) return nullptr;
  ListingCache* cache = CurrentListingCache();
  struct stat st;
  const bool keyed = cache != nullptr && ::fstat(fd.get(), &st) == 0;
  const DirectoryKey key = keyed ? KeyOf(st) : DirectoryKey{};
  if (keyed) {
    if (const std::vector<std::string>* remembered = cache->Find(ListingOf::kSearchPath, dir, key)) {
      if (remembered->size() > most) return nullptr;
      if (std::is_sorted(remembered->begin(), remembered->end())) return remembered;
      *storage = *remembered;
      std::sort(storage->begin(), storage->end());
      return storage;
    }
  }
  std::optional<std::vector<std::string>> read = DirectoryNamesUpTo(fd.get(), most);
  if (!read) return nullptr;
  *storage = std::move(*read);
  // A change later in the same clock tick could leave this ctime as it is.
  if (keyed && st.st_ctim.tv_sec < began.tv_sec - kListingSettle) {
    cache->Remember(ListingOf::kSearchPath, dir, key, *storage);
  }
  return storage;
}

std::string Parent(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == 0 ? "/" : path.substr(0, slash);
}

class Comparer {
 public:
  Comparer(const Policy& policy, const struct timespec& began, const PathComparisonLimits& limits)
      : policy_(policy), host_(policy.host()), began_(began), limits_(limits) {
    for (const std::string& text : SplitSearchPath(host_.path_env)) {
      if (text.empty() || text.front() != '/') continue;  // relative: the cwd's, the same inside
      Entry entry{CollapseSlashes(text), ResolvedOrEmpty(text), false, 0, false, nullptr, {}};
      struct stat st;
      if (entry.canonical.empty() || ::stat(entry.canonical.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) continue;
      // A directory met again finds nothing the first time did not.
      if (std::any_of(entries_.begin(), entries_.end(), [&](const Entry& e) { return e.canonical == entry.canonical; })) {
        continue;
      }
      if (entries_.size() == limits_.entries) break;
      entry.visible = Runs(entry.canonical);
      entries_.push_back(std::move(entry));
    }
  }

  PathComparison Compare(const std::string& program) {
    PathComparison result;
    for (const Entry& entry : entries_) {
      if (entry.visible) continue;
      std::string line = Short(entry.text) + " (" + Fix(entry.canonical) + ")";
      if (std::find(result.hidden.begin(), result.hidden.end(), line) == result.hidden.end()) {
        result.hidden.push_back(line);
      }
    }
    result.warning = ProgramWarning(program);
    if (!result.warning) result.warning = ShadowWarning();
    return result;
  }

 private:
  struct Entry {
    std::string text;       // as PATH has it, slashes collapsed
    std::string canonical;  // where it leads
    bool visible;           // programs there run inside
    // Its names, listed once more than kAskedBeforeListing names were asked
    // of it: one getdents for the directory instead of a stat for each name
    // (a PATH of a dozen entries asked for the hundreds of names its hidden
    // ones hold), and no listing of /usr/bin for a handful.
    mutable size_t asked = 0;
    mutable bool listed = false;
    mutable const std::vector<std::string>* names = nullptr;  // sorted: the cache's, or `read`
    mutable std::vector<std::string> read;

    // Adds what it lists to `*spent`, and reads nothing past `most` in
    // all: a directory that would pass it is left unlisted, and spends
    // what was left.
    void List(const struct timespec& began, size_t* spent, size_t most) const {
      if (listed) return;
      listed = true;
      if (*spent >= most) return;
      names = ListNames(canonical, began, most - *spent, &read);
      *spent += names != nullptr ? names->size() : most - *spent;
    }
    bool MayHold(const std::string& name, const struct timespec& began, size_t* spent, size_t most) const {
      if (!listed && ++asked > kAskedBeforeListing) List(began, spent, most);
      return !names || std::binary_search(names->begin(), names->end(), name);
    }
  };
  struct Found {
    const Entry* entry = nullptr;
    std::string path;       // entry->text + "/" + name
    std::string canonical;  // the file it leads to
  };

  // Whether the host file at `canonical` is shown, and may run, inside.
  bool Runs(const std::string& canonical) const {
    const PathGrant* grant = policy_.GrantFor(canonical);
    return grant != nullptr && Has(grant->access, Access::kExec);
  }

  // The first entry holding `name` outside (kOutside) or inside.
  enum class Side { kOutside, kInside };
  std::optional<Found> Lookup(const std::string& name, Side side) const {
    for (const Entry& entry : entries_) {
      if (side == Side::kInside && !entry.visible) continue;
      if (!entry.MayHold(name, began_, &listed_, limits_.listed)) continue;
      std::string path = entry.text + "/" + name;
      // A plain file leads where its entry does; only a symlink is resolved.
      struct stat st;
      if (::lstat(path.c_str(), &st) != 0) continue;
      std::string canonical;
      if (S_ISREG(st.st_mode)) {
        if (::access(path.c_str(), X_OK) != 0) continue;
        canonical = entry.canonical == "/" ? "/" + name : entry.canonical + "/" + name;
      } else if (S_ISLNK(st.st_mode) && IsExecutableFile(path)) {
        canonical = ResolvedOrEmpty(path);
      } else {
        continue;
      }
      if (side == Side::kInside && !Runs(canonical)) continue;
      return Found{&entry, path, canonical};
    }
    return std::nullopt;
  }

  // Whether an entry visible inside may hold `name` (from its listing):
  // where none does, the name is not found inside, so it cannot resolve to
  // another program there, and its outside file need not be looked at
  // (pyenv's shims: a hundred names, a handful also in /usr/bin; cargo's:
  // a dozen links to rustup, each resolved component by component). Asked
  // of every name of the hidden entries, so the visible ones are listed at
  // once rather than after kAskedBeforeListing names.
  bool MayBeInside(const std::string& name) const {
    return std::any_of(entries_.begin(), entries_.end(), [&](const Entry& entry) {
      if (!entry.visible) return false;
      entry.List(began_, &listed_, limits_.listed);
      return entry.MayHold(name, began_, &listed_, limits_.listed);
    });
  }

  // "~/.pyenv/shims" for a path in the home.
  std::string Short(const std::string& path) const {
    if (path != host_.home && IsWithin(path, host_.home)) return "~" + path.substr(host_.home.size());
    return path;
  }

  // The toolchain holding `canonical`, from its directories found once.
  const Toolchain* Holding(const std::string& canonical) const {
    if (!toolchain_dirs_) {
      toolchain_dirs_.emplace();
      for (const Toolchain& toolchain : Toolchains()) {
        for (const std::string& dir : ToolchainDirs(toolchain, host_)) toolchain_dirs_->emplace_back(&toolchain, dir);
      }
    }
    for (const auto& [toolchain, dir] : *toolchain_dirs_) {
      if (IsWithin(canonical, dir)) return toolchain;
    }
    return nullptr;
  }

  // The grant that would show `canonical` (a directory or a file).
  std::string Fix(const std::string& canonical) const {
    if (const Toolchain* toolchain = Holding(canonical); toolchain != nullptr) {
      return "--allow-toolchain " + std::string(toolchain->name);
    }
    return "--allow-exec " + Short(canonical);
  }

  // What would show `found` inside: its entry, and where it leads.
  std::string FixFor(const Found& found) const {
    std::string fix = found.entry->visible ? "" : Fix(found.entry->canonical);
    if (!Runs(found.canonical)) {
      std::string target = Fix(Parent(found.canonical));
      if (target != fix) fix += (fix.empty() ? "" : " ") + target;
    }
    return fix;
  }

  std::optional<std::string> ProgramWarning(const std::string& program) const {
    if (program.empty()) return std::nullopt;
    if (program.find('/') != std::string::npos) {
      std::string path = program.front() == '/' ? program : host_.cwd + "/" + program;
      std::string canonical = ResolvedOrEmpty(path);
      if (canonical.empty() || !IsExecutableFile(canonical) || Runs(canonical)) return std::nullopt;
      return program + " is not visible inside; " + Fix(Parent(canonical)) + " would fix it";
    }
    std::optional<Found> outside = Lookup(program, Side::kOutside);
    if (!outside) return std::nullopt;  // not found outside either: the run says so
    std::optional<Found> inside = Lookup(program, Side::kInside);
    if (!inside || inside->canonical != outside->canonical) {
      return program + " is " + Short(outside->path) + " outside but " +
             (inside ? Short(inside->path) + " inside" : std::string("not found inside")) + "; " + FixFor(*outside) +
             " would fix it";
    }
    // The same file, from a toolchain whose other directories it needs
    // (cargo's proxies run ~/.rustup's compilers).
    const Toolchain* toolchain = Holding(outside->canonical);
    if (toolchain == nullptr) return std::nullopt;
    std::string missing;
    for (const std::string& dir : ToolchainDirs(*toolchain, host_)) {
      if (!Runs(dir)) missing += (missing.empty() ? "" : ", ") + Short(dir);
    }
    if (missing.empty()) return std::nullopt;
    return program + " is from the " + std::string(toolchain->name) + " toolchain, but " + missing +
           " is not visible inside; --allow-toolchain " + std::string(toolchain->name) + " would fix it";
  }

  // The names a hidden entry holds that resolve, inside, to another program.
  std::optional<std::string> ShadowWarning() const {
    std::vector<std::string> names;
    std::vector<std::string> fixes;
    std::string first_entry;
    size_t checked = 0;
    for (const Entry& entry : entries_) {
      if (checked >= limits_.hidden_names || listed_ >= limits_.listed) break;  // judged no further: nor listed
      if (entry.visible) continue;
      entry.List(began_, &listed_, limits_.listed);
      if (!entry.names) continue;
      for (const std::string& name : *entry.names) {
        if (name[0] == '.') continue;
        if (++checked > limits_.hidden_names || listed_ >= limits_.listed) break;
        if (!MayBeInside(name)) continue;  // not inside: merely hidden, as `hidden` says
        std::optional<Found> outside = Lookup(name, Side::kOutside);
        if (!outside || outside->entry != &entry) continue;  // found earlier on PATH, or not a program
        std::optional<Found> inside = Lookup(name, Side::kInside);
        if (!inside || inside->canonical == outside->canonical) continue;
        if (std::find(names.begin(), names.end(), name) != names.end()) continue;
        names.push_back(name);
        if (first_entry.empty()) first_entry = Short(entry.text);
        std::string fix = FixFor(*outside);
        if (std::find(fixes.begin(), fixes.end(), fix) == fixes.end()) fixes.push_back(fix);
      }
    }
    if (names.empty()) return std::nullopt;
    std::string shown;
    for (size_t i = 0; i < names.size() && i < kNamesShown; ++i) shown += (i == 0 ? "" : ", ") + names[i];
    if (names.size() > kNamesShown) shown += " and " + std::to_string(names.size() - kNamesShown) + " more";
    std::string fix;
    for (const std::string& one : fixes) fix += (fix.empty() ? "" : " ") + one;
    return shown + (names.size() == 1 ? " resolves" : " resolve") + " to another program inside: " + first_entry +
           (fixes.size() > 1 ? " and other PATH entries are" : " is") + " not visible there; " + fix +
           " would fix it";
  }

  const Policy& policy_;
  const HostContext& host_;
  const struct timespec began_;
  const PathComparisonLimits limits_;
  std::vector<Entry> entries_;
  mutable size_t listed_ = 0;  // names listed so far, of every entry
  mutable std::optional<std::vector<std::pair<const Toolchain*, std::string>>> toolchain_dirs_;
};

}  // namespace

std::vector<std::string> SplitSearchPath(std::string_view value) {
  std::vector<std::string> entries;
  if (value.empty()) return entries;
  while (true) {
    size_t colon = value.find(':');
    entries.emplace_back(value.substr(0, colon));
    if (colon == std::string_view::npos) break;
    value.remove_prefix(colon + 1);
  }
  return entries;
}

PathComparison ComparePath(const Policy& policy, const std::string& program, const struct timespec& began,
                           const PathComparisonLimits& limits) {
  if (policy.unconfined()) return {};
  return Comparer(policy, began, limits).Compare(program);
}

PathComparison ComparePath(const Policy& policy, const std::string& program) {
  struct timespec now = {};
  ::clock_gettime(CLOCK_REALTIME, &now);
  return ComparePath(policy, program, now);
}

}  // namespace corral
