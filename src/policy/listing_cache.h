// Remembered directory listings, so a run need not read the same directory
// on every start. Two readers use them:
// - the root-only walk of /etc (DiscoverEtcSecrets in policy/roots.h): the
//   names in each directory it visits, symlinks left out;
// - the PATH comparison (policy/search_path.h): every name in each PATH
//   directory, sorted. Only its one warning line depends on them; no grant
//   or mask does.
//
//   StateListingCache cache(state);          // state/listing_cache_file.h
//   ScopedListingCache use(&cache);          // every reader in this scope
//   ... BuildPolicy(...) ... ComparePath(...) ...
//   cache.Save();
//
// What is remembered is only the names in a directory, under the key
// (device, inode, ctime) the directory had when it was listed, apart for each
// reader (ListingOf). Creating,
// removing or renaming an entry updates the directory's ctime, as does a
// chmod or chown of the directory itself, and no call sets a ctime back; a
// mount over an entry shows as that entry's own (dev, inode). So a listing
// found under the key the directory has now is the listing it has now. The
// names are never trusted for anything else: the walk stats every one of
// them live on every run, so a chmod or a new owner of a file (which changes
// only that file's ctime) is seen as before, and the PATH comparison looks up
// live each name it compares. Two checks close the rest:
// - a change in the same clock tick as the listing can leave the ctime as it
//   was, so no reader remembers a directory whose ctime lies within
//   kListingSettle of the moment it began;
// - where the filesystem counts subdirectories in a directory's link count
//   (ext4, tmpfs, xfs: st_nlink = 2 + subdirectories), a remembered listing
//   whose live subdirectories do not add up is not used by the walk: the
//   directory is listed live.
// A cache that cannot be read, or that is not exactly what corral wrote (its
// owner, mode or digest; see state/listing_cache_file.h), holds nothing: the
// readers list every directory, as with no cache. A cache can only make the
// walk list less, never mask less.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <cstdint>
#include <ctime>
#include <string>
#include <vector>

namespace corral {

inline constexpr time_t kListingSettle = 2;  // seconds

struct DirectoryKey {
  uint64_t dev = 0;
  uint64_t ino = 0;
  int64_t ctime_sec = 0;
  int64_t ctime_nsec = 0;
  bool operator==(const DirectoryKey&) const = default;
};

// The key of a directory from its stat.
inline DirectoryKey KeyOf(const struct stat& st) {
  return {static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino), static_cast<int64_t>(st.st_ctim.tv_sec),
          static_cast<int64_t>(st.st_ctim.tv_nsec)};
}

// Which reader a listing is for: each keeps what it lists (the walk leaves
// symlinks out, a PATH directory keeps every name, sorted).
enum class ListingOf { kRootOnlyWalk, kSearchPath };

class ListingCache {
 public:
  virtual ~ListingCache() = default;
  // The names remembered for `dir` (its absolute path) under exactly `key`,
  // or nullptr.
  virtual const std::vector<std::string>* Find(ListingOf of, const std::string& dir, const DirectoryKey& key) = 0;
  // `names` is what `dir`, with `key`, holds now.
  virtual void Remember(ListingOf of, const std::string& dir, const DirectoryKey& key,
                        std::vector<std::string> names) = 0;
};

// The cache the readers in this process use, or nullptr (list live).
ListingCache* CurrentListingCache();

// Installs `cache` for the readers that run while it lives.
class ScopedListingCache {
 public:
  explicit ScopedListingCache(ListingCache* cache);
  ~ScopedListingCache();
  ScopedListingCache(const ScopedListingCache&) = delete;
  ScopedListingCache& operator=(const ScopedListingCache&) = delete;

 private:
  ListingCache* previous_;
};

}  // namespace corral
