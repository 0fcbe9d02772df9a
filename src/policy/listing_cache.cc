#include "policy/listing_cache.h"

namespace corral {
namespace {

ListingCache* g_listing_cache = nullptr;

}  // namespace

ListingCache* CurrentListingCache() { return g_listing_cache; }

ScopedListingCache::ScopedListingCache(ListingCache* cache) : previous_(g_listing_cache) { g_listing_cache = cache; }

ScopedListingCache::~ScopedListingCache() { g_listing_cache = previous_; }

}  // namespace corral
