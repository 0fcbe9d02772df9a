// The part of the fuzz properties of the incremental readers (http_head.h,
// socks5.h) that is the same for all of them: feeding the bytes in two pieces
// gives the answer the whole gives. When the first piece alone is refused,
// the whole is refused with the same message; when it is read, the whole
// reads to the same value and length; NeedMore promises nothing.
//
//   std::optional<std::string> broken =
//       CheckSplitAgrees(ReadSocks5Request(bytes.first(split)), ReadSocks5Request(bytes), split, SameSocks5Request);
//   size_t split = SplitFromHash(data, size);  // in a harness: a split point the input decides
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "base/result.h"
#include "net/read_step.h"

namespace corral::testing {

template <typename T, typename Same>
std::optional<std::string> CheckSplitAgrees(const Result<ReadStep<T>>& first, const Result<ReadStep<T>>& whole,
                                            size_t split, Same same) {
  if (first.ok() && first->need_more()) return std::nullopt;
  if (!first.ok()) {
    if (whole.ok() || whole.error().message() != first.error().message()) {
      return "the first " + std::to_string(split) + " bytes are refused (" + first.error().message() +
             ") but not the whole the same way";
    }
    return std::nullopt;
  }
  if (!whole.ok() || whole->need_more() || whole->used() != first->used() || !same(whole->value(), first->value())) {
    return "the first " + std::to_string(split) + " bytes read to a value the whole does not";
  }
  return std::nullopt;
}

// 0 to `size`, from an FNV-1a hash of the bytes.
inline size_t SplitFromHash(const uint8_t* data, size_t size) {
  uint64_t hash = 14695981039346656037u;
  for (size_t i = 0; i < size; ++i) hash = (hash ^ data[i]) * 1099511628211u;
  return static_cast<size_t>(hash % (size + 1));
}

}  // namespace corral::testing
