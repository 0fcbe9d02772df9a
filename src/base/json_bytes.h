// JSON for byte strings that may not be UTF-8 (Linux paths are bytes).
//
// nlohmann::json's dump() throws on a string that is not valid UTF-8. Where
// the text is for people, dump with error_handler_t::replace (U+FFFD). Where
// it must be exact (a fingerprint's canonical form, the compiled policy file),
// EncodeBytes first: every string value that is not valid UTF-8 becomes the
// object {"bytes_hex": "<its bytes in hex>"}, so the text is lossless and two
// different byte strings never encode alike. Valid UTF-8 strings are left as
// they are (fingerprints of such policies do not change). DecodeBytes turns
// those objects back into strings. Object keys are not touched: callers use
// fixed keys only.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace corral {

bool IsJsonUtf8(const std::string& text);

nlohmann::json EncodeBytes(nlohmann::json value);

nlohmann::json DecodeBytes(nlohmann::json value);

}  // namespace corral
