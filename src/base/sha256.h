// SHA-256 over byte strings and open files, through OpenSSL's low-level
// SHA-256 (libcrypto); HMAC-SHA-256 built on it.
#pragma once

#include <string>
#include <string_view>

#include "base/result.h"

namespace corral {

// Lower-case hex digest of `data`.
std::string Sha256Hex(std::string_view data);

// Lower-case hex digest of everything readable from `fd`, from offset 0.
// Uses pread, so the file offset is left untouched.
Result<std::string> Sha256HexOfFd(int fd);

// HMAC-SHA-256 of `data` under `key`, as raw bytes.
std::string HmacSha256(std::string_view key, std::string_view data);

bool IsSha256Hex(std::string_view text);

}  // namespace corral
