#include "gate/grants.h"

#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <thread>

namespace corral {
namespace {

using std::chrono::seconds;

// A steady clock the test moves by hand.
class FakeClock {
 public:
  GrantAuthority::Clock AsClock() {
    return [this] { return now_.load(); };
  }
  void Advance(std::chrono::nanoseconds by) { now_ = now_.load() + by; }

 private:
  std::atomic<std::chrono::steady_clock::time_point> now_{std::chrono::steady_clock::time_point(seconds(1000))};
};

const GrantScope kScope{{"make", "deploy"}, "/src/app", "fp-1234", "command"};

std::string CodeOf(const Status& status) { return status.ok() ? "ok" : status.error().code(); }

TEST(Grants, IssuedGrantIsConsumedExactlyOnce) {
  GrantAuthority authority;
  Result<std::string> token = authority.Issue(kScope, seconds(30));
  ASSERT_TRUE(token.ok()) << token.error().ToString();
  EXPECT_EQ(authority.outstanding(), 1u);
  EXPECT_TRUE(authority.Consume(*token, kScope).ok());
  EXPECT_EQ(authority.outstanding(), 0u);
  Status replay = authority.Consume(*token, kScope);
  ASSERT_FALSE(replay.ok());
  EXPECT_EQ(replay.error().kind(), ErrorKind::kDenied);
  EXPECT_EQ(replay.error().code(), "grant_replayed");
}

TEST(Grants, ForgeriesAreRefused) {
  GrantAuthority authority;
  GrantAuthority other;
  std::string token = authority.Issue(kScope, seconds(30)).value();
  std::string foreign = other.Issue(kScope, seconds(30)).value();

  std::string flipped_mac = token;
  flipped_mac.back() = flipped_mac.back() == '0' ? '1' : '0';
  std::string flipped_payload = token;
  flipped_payload[5] = flipped_payload[5] == '0' ? '1' : '0';  // the id
  std::string longer_expiry = token;
  longer_expiry.insert(longer_expiry.find('.', 4) + 1, "9");

  const std::string forgeries[] = {
      "", "cg1", "not a token", foreign, flipped_mac, flipped_payload, longer_expiry,
      token.substr(0, token.size() - 1), token + "0", token + ".x", "cg2" + token.substr(3),
  };
  for (const std::string& forged : forgeries) {
    Status status = authority.Consume(forged, kScope);
    ASSERT_FALSE(status.ok()) << forged;
    EXPECT_EQ(status.error().kind(), ErrorKind::kDenied);
    EXPECT_EQ(status.error().code(), "grant_forged") << forged;
  }
  // None of that used the real grant up.
  EXPECT_TRUE(authority.Consume(token, kScope).ok());
}

TEST(Grants, ExpiryUsesTheSteadyClock) {
  FakeClock clock;
  GrantAuthority authority(clock.AsClock());
  std::string early = authority.Issue(kScope, seconds(10)).value();
  std::string late = authority.Issue(kScope, seconds(10)).value();
  clock.Advance(seconds(9));
  EXPECT_TRUE(authority.Consume(early, kScope).ok());
  clock.Advance(seconds(1));  // exactly at the expiry: expired
  EXPECT_EQ(CodeOf(authority.Consume(late, kScope)), "grant_expired");
  EXPECT_EQ(CodeOf(authority.Consume(late, kScope)), "grant_expired");
}

TEST(Grants, ExpiredAndForgottenStillSaysExpired) {
  FakeClock clock;
  GrantAuthority authority(clock.AsClock());
  std::string token = authority.Issue(kScope, seconds(1)).value();
  clock.Advance(seconds(2));
  ASSERT_TRUE(authority.Issue(kScope, seconds(1)).ok());  // purges the expired grant
  EXPECT_EQ(authority.outstanding(), 1u);
  EXPECT_EQ(CodeOf(authority.Consume(token, kScope)), "grant_expired");
}

TEST(Grants, EachScopeFieldIsBound) {
  GrantAuthority authority;
  std::string token = authority.Issue(kScope, seconds(30)).value();
  struct Row {
    GrantScope scope;
    const char* code;
  };
  const Row rows[] = {
      {{{"make", "deploy", "--force"}, "/src/app", "fp-1234", "command"}, "grant_wrong_command"},
      {{{"make deploy"}, "/src/app", "fp-1234", "command"}, "grant_wrong_command"},
      {{{"make", "deploy"}, "/src/other", "fp-1234", "command"}, "grant_wrong_cwd"},
      {{{"make", "deploy"}, "/src/app", "fp-9999", "command"}, "grant_wrong_policy"},
      {{{"make", "deploy"}, "/src/app", "fp-1234", "network"}, "grant_wrong_dimension"},
  };
  for (const Row& row : rows) EXPECT_EQ(CodeOf(authority.Consume(token, row.scope)), row.code);
  // A mismatch does not use the grant up.
  EXPECT_TRUE(authority.Consume(token, kScope).ok());
}

TEST(Grants, EveryRefusalHasItsOwnCode) {
  FakeClock clock;
  GrantAuthority authority(clock.AsClock());
  std::set<std::string> codes;
  auto fresh = [&] { return authority.Issue(kScope, seconds(10)).value(); };
  codes.insert(CodeOf(authority.Consume("junk", kScope)));
  std::string used = fresh();
  ASSERT_TRUE(authority.Consume(used, kScope).ok());
  codes.insert(CodeOf(authority.Consume(used, kScope)));
  std::string token = fresh();
  codes.insert(CodeOf(authority.Consume(token, {{"rm"}, kScope.cwd, kScope.policy_fingerprint, kScope.dimension})));
  codes.insert(CodeOf(authority.Consume(token, {kScope.argv, "/", kScope.policy_fingerprint, kScope.dimension})));
  codes.insert(CodeOf(authority.Consume(token, {kScope.argv, kScope.cwd, "other", kScope.dimension})));
  codes.insert(CodeOf(authority.Consume(token, {kScope.argv, kScope.cwd, kScope.policy_fingerprint, "host-write"})));
  clock.Advance(seconds(11));
  codes.insert(CodeOf(authority.Consume(token, kScope)));
  authority.Close();
  codes.insert(CodeOf(authority.Consume(token, kScope)));
  EXPECT_EQ(codes, (std::set<std::string>{"grant_forged", "grant_replayed", "grant_wrong_command", "grant_wrong_cwd",
                                          "grant_wrong_policy", "grant_wrong_dimension", "grant_expired",
                                          "grant_revoked"}));
}

TEST(Grants, CloseRevokesEverythingAndFailsClosed) {
  GrantAuthority authority;
  std::vector<std::string> tokens;
  for (int i = 0; i < 3; ++i) tokens.push_back(authority.Issue(kScope, seconds(30)).value());
  authority.Close();
  EXPECT_TRUE(authority.closed());
  EXPECT_EQ(authority.outstanding(), 0u);
  for (const std::string& token : tokens) EXPECT_EQ(CodeOf(authority.Consume(token, kScope)), "grant_revoked");
  Result<std::string> after = authority.Issue(kScope, seconds(30));
  ASSERT_FALSE(after.ok());
  EXPECT_EQ(after.error().code(), "grant_revoked");
  authority.Close();  // idempotent
}

TEST(Grants, LifetimeMustBePositiveAndBounded) {
  GrantAuthority authority;
  for (std::chrono::nanoseconds ttl : {std::chrono::nanoseconds(0), std::chrono::nanoseconds(-5),
                                       std::chrono::nanoseconds(std::chrono::hours(25))}) {
    Result<std::string> token = authority.Issue(kScope, ttl);
    ASSERT_FALSE(token.ok());
    EXPECT_EQ(token.error().kind(), ErrorKind::kUsage);
    EXPECT_EQ(token.error().code(), "grant_invalid");
  }
}

TEST(Grants, ConcurrentConsumersGetOneSuccess) {
  GrantAuthority authority;
  std::string token = authority.Issue(kScope, seconds(30)).value();
  std::atomic<int> successes{0};
  std::atomic<int> replays{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&] {
      Status status = authority.Consume(token, kScope);
      if (status.ok()) ++successes;
      if (!status.ok() && status.error().code() == "grant_replayed") ++replays;
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(successes.load(), 1);
  EXPECT_EQ(replays.load(), 7);
}

TEST(Grants, CanonicalCommandIsUnambiguous) {
  std::vector<std::string> joined = {"a b"};
  std::vector<std::string> split = {"a", "b"};
  std::vector<std::string> tricky = {"1:a"};
  std::vector<std::string> plain = {"a"};
  EXPECT_NE(CanonicalCommand(joined), CanonicalCommand(split));
  EXPECT_NE(CanonicalCommand(tricky), CanonicalCommand(plain));
  EXPECT_EQ(CanonicalCommand(split), "1:a1:b");
  EXPECT_EQ(CanonicalCommand({}), "");
}

TEST(Grants, TokensAreOpaqueButCarryNoScopeInTheClear) {
  GrantAuthority authority;
  std::string token = authority.Issue(kScope, seconds(30)).value();
  EXPECT_EQ(token.find("/src/app"), std::string::npos);
  EXPECT_EQ(token.find("deploy"), std::string::npos);
  EXPECT_EQ(token.rfind("cg1.", 0), 0u);
}

}  // namespace
}  // namespace corral
