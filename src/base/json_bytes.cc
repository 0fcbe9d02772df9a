#include "base/json_bytes.h"

#include "base/hex.h"
#include "base/mutant.h"

namespace corral {
namespace {

constexpr const char* kBytesKey = "bytes_hex";

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

}  // namespace

bool IsJsonUtf8(const std::string& text) {
  // The library's own check, so that "valid" means exactly "dump() accepts it".
  try {
    (void)nlohmann::json(text).dump();
    return true;
  } catch (const nlohmann::json::type_error&) {
    return false;
  }
}

namespace {

// Each value rewritten where it is: no subtree is copied.
void EncodeInPlace(nlohmann::json& value) {
  if (value.is_string()) {
    const std::string& text = value.get_ref<const std::string&>();
    if (IsJsonUtf8(text) || MutantActive(Mutant::kJsonBytes)) return;
    std::string hex = HexEncode(text);
    value = nlohmann::json{{kBytesKey, std::move(hex)}};
    return;
  }
  if (value.is_array() || value.is_object()) {
    for (auto& item : value) EncodeInPlace(item);
  }
}

void DecodeInPlace(nlohmann::json& value) {
  if (value.is_object() && value.size() == 1 && value.contains(kBytesKey) && value[kBytesKey].is_string()) {
    const std::string& hex = value[kBytesKey].get_ref<const std::string&>();
    std::string bytes;
    bool valid = hex.size() % 2 == 0;
    for (size_t i = 0; valid && i < hex.size(); i += 2) {
      int high = HexDigit(hex[i]);
      int low = HexDigit(hex[i + 1]);
      valid = high >= 0 && low >= 0;
      if (valid) bytes.push_back(static_cast<char>(high * 16 + low));
    }
    if (valid) value = std::move(bytes);
    return;  // an invalid one is left as an object: the reader's type checks refuse it
  }
  if (value.is_array() || value.is_object()) {
    for (auto& item : value) DecodeInPlace(item);
  }
}

}  // namespace

nlohmann::json EncodeBytes(nlohmann::json value) {
  EncodeInPlace(value);
  return value;
}

nlohmann::json DecodeBytes(nlohmann::json value) {
  DecodeInPlace(value);
  return value;
}

}  // namespace corral
