// Lower-case hexadecimal encoding of byte strings.
//
//   HexEncode("\x01\xff") == "01ff"
#pragma once

#include <string>
#include <string_view>

namespace corral {

std::string HexEncode(std::string_view bytes);

}  // namespace corral
