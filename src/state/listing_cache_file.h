// The listing cache of the root walk of /etc (policy/listing_cache.h), kept
// in corral's state directory (state/state_dir.h) as one file:
//
//   <state>/etc-listings   0600, the caller's, written by corral only
//
// Read once, on the first lookup (so a run that walks nothing reads
// nothing), through the state directory's descriptor with O_NOFOLLOW. A file
// that is not the caller's private regular file under 8 MiB, or whose
// trailing SHA-256 does not match what precedes it, or that does not parse,
// is ignored whole: the walk lists every directory live. Save() rewrites it
// (a file beside it, then rename, so a reader sees the old file or the new
// one) only when the walk remembered something new or no longer visits a
// directory it holds, keeping just the directories this process's walks
// visited. A file that cannot be written costs only the next run's time.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "policy/listing_cache.h"
#include "state/state_dir.h"

namespace corral {

inline constexpr char kListingCacheName[] = "etc-listings";

class StateListingCache : public ListingCache {
 public:
  // Keeps a reference to `state`, which must outlive it.
  explicit StateListingCache(const StateDir& state);

  const std::vector<std::string>* Find(const std::string& dir, const DirectoryKey& key) override;
  void Remember(const std::string& dir, const DirectoryKey& key, std::vector<std::string> names) override;
  void Save();

 private:
  struct Listing {
    DirectoryKey key;
    std::vector<std::string> names;
    bool visited = false;
  };
  void Load();

  const StateDir& state_;
  bool loaded_ = false;
  bool changed_ = false;
  std::unordered_map<std::string, Listing> listings_;
};

}  // namespace corral
