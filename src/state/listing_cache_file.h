// The listing cache (policy/listing_cache.h), kept in corral's state
// directory (state/state_dir.h) as one file:
//
//   <state>/listings   0600, the caller's, written by corral only
//
// Read once, on the first lookup (so a run that lists nothing reads
// nothing), through the state directory's descriptor with O_NOFOLLOW, and
// checked whole then; a directory's names are copied out of it only when a
// reader finds that directory (a root run's PATH comparison need not parse
// the /etc walk's hundred directories). A file
// that is not the caller's private regular file under 8 MiB, or whose
// trailing SHA-256 does not match what precedes it, or that does not parse,
// is ignored whole: every directory is listed live. Save() rewrites it
// (an unnamed file in the directory, named `listings.new-PID` once written,
// then renamed over it, so a reader sees the old file or the new one, and a
// run killed while it writes leaves nothing; a `listings.new-PID` ten minutes
// old, which a run killed between those two steps leaves, or one killed
// while it wrote where the filesystem has no O_TMPFILE, is removed)
// only when a reader remembered something new or no longer visits a
// directory it holds. Of a reader this process used, it keeps just the
// directories that reader visited; the listings of a reader it did not use
// (a run that walks no /etc) are kept as they were. A file that would pass
// 8 MiB is not written. A file that cannot be written costs only the next run's time.
// The file of earlier versions (<state>/etc-listings) is removed then.
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "policy/listing_cache.h"
#include "state/state_dir.h"

namespace corral {

inline constexpr char kListingCacheName[] = "listings";

class StateListingCache : public ListingCache {
 public:
  // Keeps a reference to `state`, which must outlive it.
  explicit StateListingCache(const StateDir& state);

  const std::vector<std::string>* Find(ListingOf of, const std::string& dir, const DirectoryKey& key) override;
  void Remember(ListingOf of, const std::string& dir, const DirectoryKey& key,
                std::vector<std::string> names) override;
  void Save();

 private:
  // A directory's listing. One read from the file keeps its names as the
  // file has them (`raw`: `count` names, each ending in a NUL) until a
  // reader finds it; a run parses only the directories it looks up.
  struct Listing {
    DirectoryKey key;
    std::vector<std::string> names;  // once parsed, or remembered
    std::string_view raw;            // in text_, while not parsed
    size_t count = 0;
    bool parsed = true;
    bool visited = false;
  };
  void Load();

  const StateDir& state_;
  bool Used(ListingOf of) const { return used_[static_cast<size_t>(of)]; }

  // Find, Remember and Save may be called from two threads at once (the
  // PATH comparison runs beside the spawn, whose /etc walk may list): the
  // map is theirs under this lock. A listing Find returned stays where it
  // is until Save, as long as no one remembers that directory for that
  // reader again; the two readers never share a key.
  std::mutex mutex_;
  bool loaded_ = false;
  bool changed_ = false;
  bool used_[2] = {false, false};  // by ListingOf: a reader looked something up
  std::string text_;  // the file as read: the listings not parsed point into it
  std::map<std::pair<ListingOf, std::string>, Listing> listings_;
};

}  // namespace corral
