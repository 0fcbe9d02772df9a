// Single-use grant tokens, for a grant that crosses a process boundary.
//
// A profile dimension set to Gated (a command, the network, host writes, ...)
// is allowed only for a call that presents a grant. Within one process the
// grant needs no token: gate::Admit (admit.h) asks for each Gated dimension,
// and the AdmittedRun it returns is bound to the command, the cwd and the
// policy by construction and runs once. A token is for a front end that hands
// a grant to another process to present on a later call; none does today
// (`corral wrap` refuses a Gated dimension: gated_not_wrappable). A
// GrantAuthority issues
// a grant for one exact scope (the command's argv, its cwd, the policy
// fingerprint and the dimension) with an expiry; the grant is consumed by
// the first call that presents it.
//
//   GrantAuthority authority;                      // a fresh random key
//   GrantScope scope{{"make", "deploy"}, "/src/app", policy.fingerprint(), "command"};
//   CORRAL_ASSIGN_OR_RETURN(std::string token, authority.Issue(scope, std::chrono::seconds(30)));
//   ... later, before spawning ...
//   CORRAL_TRY(authority.Consume(token, scope));   // ok once; then grant_replayed
//
// A token is opaque: a payload (the grant id, the expiry and a SHA-256 of
// each scope field) and its HMAC-SHA-256 under a key drawn from getrandom(2) when
// the authority is built, never written anywhere. Consume checks, in order:
// the authority is open, the MAC (compared in constant time), the grant is
// known and unused, unexpired (a steady clock), and each scope field. Every
// refusal is ErrorKind::kDenied with a distinct code: grant_forged,
// grant_replayed, grant_expired, grant_wrong_command, grant_wrong_cwd,
// grant_wrong_policy, grant_wrong_dimension, grant_revoked. A grant refused
// for a scope mismatch is not consumed.
//
// Security: Close() (and the destructor) revokes every outstanding grant and
// wipes the key; afterwards Issue and Consume fail closed with
// grant_revoked. A grant never outlives its process: the key dies with it.
// All methods are thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "base/result.h"
#include "policy/policy_file.h"  // CanonicalCommand

namespace corral {

struct GrantScope {
  std::vector<std::string> argv;  // the exact command
  std::string cwd;
  std::string policy_fingerprint;
  std::string dimension;  // the Gated dimension's name, e.g. "command"
};


class GrantAuthority {
 public:
  using Clock = std::function<std::chrono::steady_clock::time_point()>;

  // `clock` is for tests; the default reads std::chrono::steady_clock. If no
  // random key can be drawn, the authority starts closed.
  explicit GrantAuthority(Clock clock = nullptr);
  ~GrantAuthority();
  GrantAuthority(const GrantAuthority&) = delete;
  GrantAuthority& operator=(const GrantAuthority&) = delete;

  // A token for `scope`, valid for `ttl` (which must be positive:
  // ErrorKind::kUsage, code "grant_invalid").
  Result<std::string> Issue(const GrantScope& scope, std::chrono::nanoseconds ttl);
  // Verifies and uses up `token` for `scope`.
  Status Consume(std::string_view token, const GrantScope& scope);
  // Revokes every outstanding grant, for good.
  void Close();

  bool closed() const;
  // Grants issued, not yet used, and not expired.
  size_t outstanding() const;

 private:
  std::chrono::steady_clock::time_point Now() const;

  mutable std::mutex mutex_;
  Clock clock_;
  std::string key_;
  bool closed_ = false;
  uint64_t next_id_ = 1;
  // Outstanding grants: id -> expiry. A used grant is erased; its token
  // still verifies, which is how a replay is told from a forgery.
  std::map<uint64_t, std::chrono::steady_clock::time_point> grants_;
};

}  // namespace corral
