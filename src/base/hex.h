// Lower-case hexadecimal encoding of byte strings.
//
//   HexEncode("\x01\xff") == "01ff"
//   HexDecode("01ff") == "\x01\xff" (an odd length or a non-hex digit: an error)
#pragma once

#include <string>
#include <string_view>

#include "base/result.h"

namespace corral {

std::string HexEncode(std::string_view bytes);
Result<std::string> HexDecode(std::string_view hex);

}  // namespace corral
