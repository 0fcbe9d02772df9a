#include "state/listing_cache_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <ctime>
#include <string_view>

#include "base/directory_names.h"
#include "base/sha256.h"
#include "base/unique_fd.h"

namespace corral {
namespace {

constexpr std::string_view kHeader = "corral-listings 1\n";
constexpr char kEarlierName[] = "etc-listings";

constexpr std::string_view KindName(ListingOf of) { return of == ListingOf::kRootOnlyWalk ? "walk" : "path"; }
constexpr size_t kMaxFile = 8 << 20;
constexpr size_t kDigest = 64;

// The file Save writes before it renames it over the cache: its name is
// this prefix and the writer's PID.
constexpr std::string_view kTemporaryPrefix = "listings.new-";
// One older than this is a killed run's, never a running one's.
constexpr time_t kStaleTemporary = 600;  // seconds

// A new file of its own (O_EXCL): whatever is at `name` (a link left by a
// killed run, or planted) is removed, never written through.
UniqueFd NewFileAt(int dir, const std::string& name) {
  constexpr int kFlags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
  UniqueFd fd(::openat(dir, name.c_str(), kFlags, 0600));
  if (!fd && errno == EEXIST && ::unlinkat(dir, name.c_str(), 0) == 0) fd.Reset(::openat(dir, name.c_str(), kFlags, 0600));
  return fd;
}

// `text`, whole, in a new file at `name` in `dir`; an invalid descriptor
// when it cannot be. Written unnamed first (O_TMPFILE) and named only once
// complete, so a run killed while it writes leaves nothing behind; where
// the filesystem (or a missing /proc) allows no unnamed file, written at
// `name` from the start.
UniqueFd WrittenBeside(int dir, const std::string& name, const std::string& text) {
  auto whole = [&](int fd) { return ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()); };
  UniqueFd unnamed(::openat(dir, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600));
  if (unnamed && whole(unnamed.get())) {
    const std::string self = "/proc/self/fd/" + std::to_string(unnamed.get());
    auto link = [&] { return ::linkat(AT_FDCWD, self.c_str(), dir, name.c_str(), AT_SYMLINK_FOLLOW) == 0; };
    if (link() || (errno == EEXIST && ::unlinkat(dir, name.c_str(), 0) == 0 && link())) return unnamed;
  }
  UniqueFd named = NewFileAt(dir, name);
  if (named && !whole(named.get())) named.Reset();
  return named;
}

// The files a killed run left beside the cache (`listings.new-PID`, killed
// between naming its file and renaming it, or without O_TMPFILE), but
// `mine` and any a running Save may still rename.
void RemoveStaleTemporaries(int dir, const std::string& mine) {
  struct timespec now = {};
  ::clock_gettime(CLOCK_REALTIME, &now);
  for (const std::string& name : DirectoryNames(dir)) {
    if (name == mine || name.rfind(kTemporaryPrefix, 0) != 0) continue;
    struct stat st;
    if (::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && st.st_mtime < now.tv_sec - kStaleTemporary) {
      ::unlinkat(dir, name.c_str(), 0);
    }
  }
}

// Up to the next NUL from `*at`; false when there is none.
bool Field(std::string_view text, size_t* at, std::string_view* field) {
  size_t end = text.find('\0', *at);
  if (end == std::string_view::npos) return false;
  *field = text.substr(*at, end - *at);
  *at = end + 1;
  return true;
}

// One decimal number at the front of `*text`, taken off it.
template <typename Number>
bool TakeNumber(std::string_view* text, Number* number) {
  auto [stop, error] = std::from_chars(text->data(), text->data() + text->size(), *number);
  if (error != std::errc() || stop == text->data()) return false;
  text->remove_prefix(static_cast<size_t>(stop - text->data()));
  return true;
}

// One space at the front of `*text`, taken off it.
bool TakeSpace(std::string_view* text) {
  if (text->empty() || text->front() != ' ') return false;
  text->remove_prefix(1);
  return true;
}

// "dev ino ctime_sec ctime_nsec count", exactly.
bool ParseKey(std::string_view text, DirectoryKey* key, uint64_t* count) {
  return TakeNumber(&text, &key->dev) && TakeSpace(&text) && TakeNumber(&text, &key->ino) && TakeSpace(&text) &&
         TakeNumber(&text, &key->ctime_sec) && TakeSpace(&text) && TakeNumber(&text, &key->ctime_nsec) &&
         TakeSpace(&text) && TakeNumber(&text, count) && text.empty();
}

}  // namespace

StateListingCache::StateListingCache(const StateDir& state) : state_(state) {}

// The body: for each directory, its reader ("walk" or "path"), its path,
// "dev ino ctime_sec ctime_nsec count", then `count` names, each field ending
// in a NUL (no path or name holds one).
void StateListingCache::Load() {
  loaded_ = true;
  UniqueFd fd(::openat(state_.fd(), kListingCacheName, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (!fd) return;
  struct stat st;
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid() || (st.st_mode & 077) != 0 ||
      static_cast<size_t>(st.st_size) > kMaxFile) {
    return;
  }
  // Read into text_ itself: the listings not parsed point into it.
  std::string& text = text_;
  text.assign(static_cast<size_t>(st.st_size), '\0');
  if (::pread(fd.get(), text.data(), text.size(), 0) != static_cast<ssize_t>(text.size())) return;
  if (text.size() < kHeader.size() + kDigest + 1 || !std::string_view(text).starts_with(kHeader) ||
      text.back() != '\n') {
    return;
  }
  const size_t body_end = text.size() - kDigest - 1;
  if (Sha256Hex(std::string_view(text).substr(0, body_end)) != std::string_view(text).substr(body_end, kDigest)) return;
  const std::string_view body = std::string_view(text).substr(0, body_end);
  std::map<std::pair<ListingOf, std::string>, Listing> listings;
  for (size_t at = kHeader.size(); at < body.size();) {
    std::string_view kind, dir, key_text;
    if (!Field(body, &at, &kind) || !Field(body, &at, &dir) || !Field(body, &at, &key_text) || dir.empty() ||
        dir[0] != '/') {
      return;
    }
    ListingOf of = ListingOf::kRootOnlyWalk;
    if (kind == KindName(ListingOf::kSearchPath)) {
      of = ListingOf::kSearchPath;
    } else if (kind != KindName(ListingOf::kRootOnlyWalk)) {
      return;
    }
    Listing listing;
    uint64_t count = 0;
    if (!ParseKey(key_text, &listing.key, &count) || count > body.size()) return;
    // Every name is checked now; none is copied until a reader finds it.
    const size_t names_at = at;
    for (uint64_t i = 0; i < count; ++i) {
      std::string_view name;
      if (!Field(body, &at, &name) || name.empty() || name == "." || name == ".." ||
          name.find('/') != std::string_view::npos) {
        return;
      }
    }
    listing.raw = body.substr(names_at, at - names_at);
    listing.count = static_cast<size_t>(count);
    listing.parsed = false;
    if (!listings.emplace(std::make_pair(of, std::string(dir)), std::move(listing)).second) return;
  }
  listings_ = std::move(listings);
}

const std::vector<std::string>* StateListingCache::Find(ListingOf of, const std::string& dir,
                                                      const DirectoryKey& key) {
  std::lock_guard lock(mutex_);
  if (!loaded_) Load();
  used_[static_cast<size_t>(of)] = true;
  auto found = listings_.find(std::make_pair(of, dir));
  if (found == listings_.end() || !(found->second.key == key)) return nullptr;
  Listing& listing = found->second;
  listing.visited = true;
  if (!listing.parsed) {
    listing.names.reserve(listing.count);
    for (size_t at = 0; at < listing.raw.size();) {
      std::string_view name;
      Field(listing.raw, &at, &name);  // checked by Load
      listing.names.emplace_back(name);
    }
    listing.parsed = true;
  }
  return &listing.names;
}

void StateListingCache::Remember(ListingOf of, const std::string& dir, const DirectoryKey& key,
                                 std::vector<std::string> names) {
  std::lock_guard lock(mutex_);
  if (!loaded_) Load();
  used_[static_cast<size_t>(of)] = true;
  Listing& listing = listings_[std::make_pair(of, dir)];
  listing = Listing();
  listing.key = key;
  listing.names = std::move(names);
  listing.visited = true;
  changed_ = true;
}

void StateListingCache::Save() {
  std::lock_guard lock(mutex_);
  if (!loaded_) return;  // no reader looked
  // What a reader this process used did not visit is gone or changed.
  auto kept = [this](const std::pair<const std::pair<ListingOf, std::string>, Listing>& entry) {
    return entry.second.visited || !Used(entry.first.first);
  };
  bool stale = false;
  for (const auto& entry : listings_) stale = stale || !kept(entry);
  if (!changed_ && !stale) return;
  std::string text(kHeader);
  for (const auto& entry : listings_) {
    if (!kept(entry)) continue;
    const auto& [of, dir] = entry.first;
    const Listing& listing = entry.second;
    char key[128];
    std::snprintf(key, sizeof key, "%" PRIu64 " %" PRIu64 " %" PRId64 " %" PRId64 " %zu", listing.key.dev,
                  listing.key.ino, listing.key.ctime_sec, listing.key.ctime_nsec,
                  listing.parsed ? listing.names.size() : listing.count);
    text += KindName(of);
    text += '\0';
    text += dir;
    text += '\0';
    text += key;
    text += '\0';
    if (!listing.parsed) {
      text += listing.raw;  // as read: `count` names, each ending in a NUL
      continue;
    }
    for (const std::string& name : listing.names) {
      text += name;
      text += '\0';
    }
  }
  if (text.size() + kDigest + 1 > kMaxFile) return;  // Load would ignore it
  text += Sha256Hex(text);
  text += '\n';
  const std::string temp = std::string(kTemporaryPrefix) + std::to_string(::getpid());
  UniqueFd fd = WrittenBeside(state_.fd(), temp, text);
  if (!fd || ::renameat(state_.fd(), temp.c_str(), state_.fd(), kListingCacheName) != 0) {
    ::unlinkat(state_.fd(), temp.c_str(), 0);
    return;
  }
  RemoveStaleTemporaries(state_.fd(), temp);
  ::unlinkat(state_.fd(), kEarlierName, 0);
  changed_ = false;
  for (auto it = listings_.begin(); it != listings_.end();) it = kept(*it) ? std::next(it) : listings_.erase(it);
}

}  // namespace corral
