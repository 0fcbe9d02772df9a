// Access rights a path grant gives: read, write and exec, combinable.
// Write does not imply exec, and exec implies read.
#pragma once

#include <cstdint>
#include <string>

namespace corral {

enum class Access : uint8_t {
  kNone = 0,
  kRead = 1,
  kWrite = 2,
  kExec = 4,
};

constexpr Access operator|(Access a, Access b) {
  return static_cast<Access>(static_cast<uint8_t>(a) | static_cast<uint8_t>(b));
}
constexpr Access operator&(Access a, Access b) {
  return static_cast<Access>(static_cast<uint8_t>(a) & static_cast<uint8_t>(b));
}
constexpr Access& operator|=(Access& a, Access b) { return a = a | b; }
constexpr bool Has(Access set, Access bit) { return (set & bit) == bit; }
// True when every right in `inner` is also in `outer`.
constexpr bool Covers(Access outer, Access inner) { return (outer & inner) == inner; }

// "r", "rw", "rx", "rwx".
std::string AccessString(Access access);

}  // namespace corral
