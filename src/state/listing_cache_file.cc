#include "state/listing_cache_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <string_view>

#include "base/sha256.h"
#include "base/unique_fd.h"

namespace corral {
namespace {

constexpr std::string_view kHeader = "corral-listings 1\n";
constexpr char kEarlierName[] = "etc-listings";

constexpr std::string_view KindName(ListingOf of) { return of == ListingOf::kRootOnlyWalk ? "walk" : "path"; }
constexpr size_t kMaxFile = 8 << 20;
constexpr size_t kDigest = 64;

// Up to the next NUL from `*at`; false when there is none.
bool Field(std::string_view text, size_t* at, std::string_view* field) {
  size_t end = text.find('\0', *at);
  if (end == std::string_view::npos) return false;
  *field = text.substr(*at, end - *at);
  *at = end + 1;
  return true;
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
  std::string text(static_cast<size_t>(st.st_size), '\0');
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
    unsigned long long count = 0;
    char tail = 0;
    if (std::sscanf(std::string(key_text).c_str(), "%" SCNu64 " %" SCNu64 " %" SCNd64 " %" SCNd64 " %llu%c",
                    &listing.key.dev, &listing.key.ino, &listing.key.ctime_sec, &listing.key.ctime_nsec, &count,
                    &tail) != 5 ||
        count > body.size()) {
      return;
    }
    // Each name takes two bytes at least: a count the file cannot hold
    // reserves no more than what is left of it.
    listing.names.reserve(std::min(static_cast<size_t>(count), (body.size() - at) / 2));
    for (unsigned long long i = 0; i < count; ++i) {
      std::string_view name;
      if (!Field(body, &at, &name) || name.empty() || name == "." || name == ".." ||
          name.find('/') != std::string_view::npos) {
        return;
      }
      listing.names.emplace_back(name);
    }
    if (!listings.emplace(std::make_pair(of, std::string(dir)), std::move(listing)).second) return;
  }
  listings_ = std::move(listings);
}

const std::vector<std::string>* StateListingCache::Find(ListingOf of, const std::string& dir,
                                                      const DirectoryKey& key) {
  if (!loaded_) Load();
  used_[static_cast<size_t>(of)] = true;
  auto found = listings_.find(std::make_pair(of, dir));
  if (found == listings_.end() || !(found->second.key == key)) return nullptr;
  found->second.visited = true;
  return &found->second.names;
}

void StateListingCache::Remember(ListingOf of, const std::string& dir, const DirectoryKey& key,
                                 std::vector<std::string> names) {
  if (!loaded_) Load();
  used_[static_cast<size_t>(of)] = true;
  listings_[std::make_pair(of, dir)] = Listing{key, std::move(names), true};
  changed_ = true;
}

void StateListingCache::Save() {
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
                  listing.key.ino, listing.key.ctime_sec, listing.key.ctime_nsec, listing.names.size());
    text += KindName(of);
    text += '\0';
    text += dir;
    text += '\0';
    text += key;
    text += '\0';
    for (const std::string& name : listing.names) {
      text += name;
      text += '\0';
    }
  }
  if (text.size() + kDigest + 1 > kMaxFile) return;  // Load would ignore it
  text += Sha256Hex(text);
  text += '\n';
  const std::string temp = std::string(kListingCacheName) + ".new-" + std::to_string(::getpid());
  // A new file of its own (O_EXCL): whatever is at the name (a link left by
  // a killed run, or planted) is removed, never written through.
  constexpr int kFlags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
  UniqueFd fd(::openat(state_.fd(), temp.c_str(), kFlags, 0600));
  if (!fd && errno == EEXIST && ::unlinkat(state_.fd(), temp.c_str(), 0) == 0) {
    fd.Reset(::openat(state_.fd(), temp.c_str(), kFlags, 0600));
  }
  if (!fd) return;
  bool written = ::write(fd.get(), text.data(), text.size()) == static_cast<ssize_t>(text.size());
  fd.Reset();
  if (!written || ::renameat(state_.fd(), temp.c_str(), state_.fd(), kListingCacheName) != 0) {
    ::unlinkat(state_.fd(), temp.c_str(), 0);
    return;
  }
  ::unlinkat(state_.fd(), kEarlierName, 0);
  changed_ = false;
  for (auto it = listings_.begin(); it != listings_.end();) it = kept(*it) ? std::next(it) : listings_.erase(it);
}

}  // namespace corral
