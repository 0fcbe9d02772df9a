#include "base/sha256.h"

// Only OpenSSL's low-level SHA-256 is used, and HMAC is built on it here
// (RFC 2104). The EVP API (EVP_sha256, HMAC()) would initialise the library
// and, more costly still, link in its provider tables: they were nine tenths
// of corral's relocated data, which the dynamic loader writes on every start.
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/crypto.h>
#include <openssl/sha.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace corral {
namespace {

std::string ToHex(const unsigned char* bytes, unsigned length) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(length * 2);
  for (unsigned i = 0; i < length; ++i) {
    out.push_back(kDigits[bytes[i] >> 4]);
    out.push_back(kDigits[bytes[i] & 0xf]);
  }
  return out;
}

}  // namespace

std::string Sha256Hex(std::string_view data) {
  // Not SHA256(): in OpenSSL 3 it goes through EVP and initialises it.
  SHA256_CTX ctx;
  SHA256_Init(&ctx);
  SHA256_Update(&ctx, data.data(), data.size());
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256_Final(digest, &ctx);
  return ToHex(digest, sizeof digest);
}

Result<std::string> Sha256HexOfFd(int fd) {
  SHA256_CTX ctx;
  SHA256_Init(&ctx);
  char buffer[1 << 16];
  off_t offset = 0;
  for (;;) {
    ssize_t n = ::pread(fd, buffer, sizeof buffer, offset);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Error::FromErrno(ErrorKind::kIo, "cannot read the program to hash it", "pread", errno);
    }
    if (n == 0) break;
    SHA256_Update(&ctx, buffer, static_cast<size_t>(n));
    offset += n;
  }
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256_Final(digest, &ctx);
  return ToHex(digest, sizeof digest);
}

std::string HmacSha256(std::string_view key, std::string_view data) {
  constexpr size_t kBlock = SHA256_CBLOCK;  // 64 bytes
  unsigned char block_key[kBlock] = {};
  if (key.size() > kBlock) {
    SHA256_CTX ctx;
    SHA256_Init(&ctx);
    SHA256_Update(&ctx, key.data(), key.size());
    SHA256_Final(block_key, &ctx);
  } else if (!key.empty()) {
    std::memcpy(block_key, key.data(), key.size());
  }
  unsigned char pad[kBlock];
  unsigned char inner[SHA256_DIGEST_LENGTH];
  for (size_t i = 0; i < kBlock; ++i) pad[i] = block_key[i] ^ 0x36;
  SHA256_CTX ctx;
  SHA256_Init(&ctx);
  SHA256_Update(&ctx, pad, kBlock);
  SHA256_Update(&ctx, data.data(), data.size());
  SHA256_Final(inner, &ctx);
  for (size_t i = 0; i < kBlock; ++i) pad[i] = block_key[i] ^ 0x5c;
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256_Init(&ctx);
  SHA256_Update(&ctx, pad, kBlock);
  SHA256_Update(&ctx, inner, sizeof inner);
  SHA256_Final(digest, &ctx);
  OPENSSL_cleanse(block_key, sizeof block_key);
  OPENSSL_cleanse(pad, sizeof pad);
  OPENSSL_cleanse(inner, sizeof inner);
  OPENSSL_cleanse(&ctx, sizeof ctx);
  return std::string(reinterpret_cast<const char*>(digest), sizeof digest);
}

bool IsSha256Hex(std::string_view text) {
  if (text.size() != 64) return false;
  for (char c : text) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

}  // namespace corral
