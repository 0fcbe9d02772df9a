#include "base/sha256.h"

// The digest on every run's path (the policy fingerprint) uses OpenSSL's
// low-level SHA-256, which needs no library initialisation; the EVP API would
// load the provider tables first, which costs more than the rest of a spawn's
// user-space work. HMAC (single-use grants, off the spawn path) uses EVP.
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>
#include <unistd.h>

#include <cerrno>
#include <memory>

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
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned length = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), digest, &length);
  return std::string(reinterpret_cast<const char*>(digest), length);
}

bool IsSha256Hex(std::string_view text) {
  if (text.size() != 64) return false;
  for (char c : text) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

}  // namespace corral
