#include "gate/grants.h"

#include <openssl/crypto.h>

#include <charconv>
#include <cstdio>
#include <optional>

#include "base/hex.h"
#include "base/mutant.h"
#include "base/random.h"
#include "base/sha256.h"

namespace corral {
namespace {

constexpr std::string_view kTokenVersion = "cg1";
constexpr size_t kKeyBytes = 32;
constexpr auto kMaxTtl = std::chrono::hours(24);

Error Refused(std::string_view code, std::string message) {
  return Error(ErrorKind::kDenied, "grant refused: " + std::move(message)).WithCode(std::string(code));
}

bool IsLowerHex(std::string_view text, size_t length) {
  if (text.size() != length) return false;
  for (char c : text) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

// The scope digests, in token order.
struct ScopeDigests {
  std::string command, cwd, policy, dimension;
};

ScopeDigests DigestsOf(const GrantScope& scope) {
  return {Sha256Hex(CanonicalCommand(scope.argv)), Sha256Hex(scope.cwd), Sha256Hex(scope.policy_fingerprint),
          Sha256Hex(scope.dimension)};
}

struct ParsedToken {
  std::string payload;  // everything the MAC covers
  std::string mac;
  uint64_t id = 0;
  int64_t expiry_ns = 0;
  ScopeDigests digests;
};

std::optional<ParsedToken> ParseToken(std::string_view token) {
  std::vector<std::string_view> parts;
  for (size_t start = 0;;) {
    size_t dot = token.find('.', start);
    parts.push_back(token.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start));
    if (dot == std::string_view::npos || parts.size() > 8) break;
    start = dot + 1;
  }
  if (parts.size() != 8 || parts[0] != kTokenVersion || !IsLowerHex(parts[1], 16) || !IsLowerHex(parts[7], 64)) {
    return std::nullopt;
  }
  for (size_t i = 3; i < 7; ++i) {
    if (!IsLowerHex(parts[i], 64)) return std::nullopt;
  }
  ParsedToken parsed;
  auto [id_end, id_error] = std::from_chars(parts[1].data(), parts[1].data() + parts[1].size(), parsed.id, 16);
  auto [expiry_end, expiry_error] =
      std::from_chars(parts[2].data(), parts[2].data() + parts[2].size(), parsed.expiry_ns, 10);
  if (id_error != std::errc() || id_end != parts[1].data() + parts[1].size() || expiry_error != std::errc() ||
      expiry_end != parts[2].data() + parts[2].size() || parts[2].empty()) {
    return std::nullopt;
  }
  parsed.digests = {std::string(parts[3]), std::string(parts[4]), std::string(parts[5]), std::string(parts[6])};
  parsed.mac = std::string(parts[7]);
  parsed.payload = std::string(token.substr(0, token.size() - parts[7].size() - 1));
  return parsed;
}

}  // namespace

GrantAuthority::GrantAuthority(Clock clock) : clock_(std::move(clock)) {
  Result<std::string> key = RandomBytes(kKeyBytes);
  if (key.ok()) {
    key_ = std::move(key).value();
  } else {
    closed_ = true;  // no key, no grants: fail closed
  }
}

GrantAuthority::~GrantAuthority() { Close(); }

std::chrono::steady_clock::time_point GrantAuthority::Now() const {
  return clock_ ? clock_() : std::chrono::steady_clock::now();
}

Result<std::string> GrantAuthority::Issue(const GrantScope& scope, std::chrono::nanoseconds ttl) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (closed_) return Refused("grant_revoked", "the grant authority is closed");
  if (ttl <= std::chrono::nanoseconds::zero() || ttl > kMaxTtl) {
    return Error(ErrorKind::kUsage, "a grant's lifetime must be positive and at most 24 hours")
        .WithCode("grant_invalid");
  }
  auto now = Now();
  // Forget grants that can no longer be used.
  for (auto it = grants_.begin(); it != grants_.end();) {
    it = it->second <= now ? grants_.erase(it) : std::next(it);
  }
  uint64_t id = next_id_++;
  auto expiry = now + ttl;
  char id_hex[17];
  std::snprintf(id_hex, sizeof id_hex, "%016llx", static_cast<unsigned long long>(id));
  ScopeDigests digests = DigestsOf(scope);
  std::string payload = std::string(kTokenVersion) + "." + id_hex + "." +
                        std::to_string(std::chrono::duration_cast<std::chrono::nanoseconds>(expiry.time_since_epoch()).count()) +
                        "." + digests.command + "." + digests.cwd + "." + digests.policy + "." + digests.dimension;
  grants_.emplace(id, expiry);
  return payload + "." + HexEncode(HmacSha256(key_, payload));
}

Status GrantAuthority::Consume(std::string_view token, const GrantScope& scope) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (closed_) return Refused("grant_revoked", "the grant authority was closed, revoking every grant");
  if (MutantActive(Mutant::kGrantCheck)) return {};
  std::optional<ParsedToken> parsed = ParseToken(token);
  if (!parsed) return Refused("grant_forged", "not a grant token");
  std::string expected = HexEncode(HmacSha256(key_, parsed->payload));
  if (CRYPTO_memcmp(expected.data(), parsed->mac.data(), expected.size()) != 0) {
    return Refused("grant_forged", "the token's signature does not verify");
  }

  auto now = Now();
  auto expiry = std::chrono::steady_clock::time_point(std::chrono::nanoseconds(parsed->expiry_ns));
  auto found = grants_.find(parsed->id);
  if (found == grants_.end()) {
    // Signed by this authority, so issued here: gone means used, or expired
    // and forgotten.
    if (now >= expiry) return Refused("grant_expired", "the grant has expired");
    return Refused("grant_replayed", "the grant was already used");
  }
  if (now >= expiry) {
    grants_.erase(found);
    return Refused("grant_expired", "the grant has expired");
  }
  ScopeDigests want = DigestsOf(scope);
  if (want.command != parsed->digests.command) return Refused("grant_wrong_command", "issued for another command");
  if (want.cwd != parsed->digests.cwd) return Refused("grant_wrong_cwd", "issued for another working directory");
  if (want.policy != parsed->digests.policy) return Refused("grant_wrong_policy", "issued under another policy");
  if (want.dimension != parsed->digests.dimension) {
    return Refused("grant_wrong_dimension", "issued for another access dimension");
  }
  grants_.erase(found);
  return Ok();
}

void GrantAuthority::Close() {
  std::lock_guard<std::mutex> lock(mutex_);
  closed_ = true;
  grants_.clear();
  if (!key_.empty()) OPENSSL_cleanse(key_.data(), key_.size());
  key_.clear();
}

bool GrantAuthority::closed() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return closed_;
}

size_t GrantAuthority::outstanding() const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto now = Now();
  size_t count = 0;
  for (const auto& [id, expiry] : grants_) count += expiry > now ? 1 : 0;
  return count;
}

}  // namespace corral
