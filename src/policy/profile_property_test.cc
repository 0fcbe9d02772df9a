// Restrict is a lattice meet: checked over many generated profiles.
#include <gtest/gtest.h>

#include <random>

#include "policy/path.h"
#include "policy/profile.h"

namespace corral {
namespace {

constexpr int kPairs = 12000;
constexpr uint64_t kSeed = 0x636f7272616cULL;  // fixed: failures reproduce

// A small tree with nesting, siblings and a shared prefix ("/a" vs "/ab").
const std::vector<std::string> kPaths = {"/", "/a", "/a/b", "/a/b/c", "/a/c", "/ab", "/b", "/b/a", "/c"};

class Generator {
 public:
  explicit Generator(uint64_t seed) : rng_(seed) {}

  Profile Next() {
    ProfileConfig config;
    config.workspace_read = Level();
    config.workspace_write = std::min(config.workspace_read, Level());
    config.workspace_root = Path();
    config.host_read = Level();
    config.host_read_roots = Paths(1 + Below(3));
    config.host_write = std::min(config.host_read, Level());
    for (int i = 0, n = 1 + Below(3); i < n; ++i) {
      std::string path = Path();
      if (std::any_of(config.host_read_roots.begin(), config.host_read_roots.end(),
                      [&](const std::string& root) { return IsWithin(path, root); })) {
        config.host_write_roots.push_back(path);
      }
    }
    if (config.host_write_roots.empty()) config.host_write = Access3::kDeny;
    config.network = Level();
    config.command = Level();
    config.home = Below(2) == 0 ? HomeMode::kIsolated : HomeMode::kReal;
    config.isolation = Below(3) == 0 ? Isolation::kUnconfined : Isolation::kSandboxed;
    config.acknowledge_unconfined = config.isolation == Isolation::kUnconfined || Below(2) == 0;
    Result<Profile> profile = NewProfile(config);
    EXPECT_TRUE(profile.ok()) << profile.error().message();
    return profile.value();
  }

 private:
  int Below(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }
  Access3 Level() { return static_cast<Access3>(Below(3)); }
  // "/" is rare so that most pairs are not trivially nested.
  std::string Path() { return Below(10) == 0 ? "/" : kPaths[1 + Below(static_cast<int>(kPaths.size()) - 1)]; }
  std::vector<std::string> Paths(int n) {
    std::vector<std::string> out;
    for (int i = 0; i < n; ++i) out.push_back(Path());
    return out;
  }

  std::mt19937_64 rng_;
};

std::string Show(const Profile& profile) { return CanonicalProfileJson(profile); }

TEST(RestrictProperty, NeverWiderThanEitherInput) {
  Generator generate(kSeed);
  for (int i = 0; i < kPairs; ++i) {
    Profile a = generate.Next();
    Profile b = generate.Next();
    Profile meet = Restrict(a, b);
    ASSERT_TRUE(IsNarrowerOrEqual(meet, a)) << Show(a) << "\n" << Show(b) << "\n" << Show(meet);
    ASSERT_TRUE(IsNarrowerOrEqual(meet, b)) << Show(a) << "\n" << Show(b) << "\n" << Show(meet);
  }
}

TEST(RestrictProperty, Commutative) {
  Generator generate(kSeed + 1);
  for (int i = 0; i < kPairs; ++i) {
    Profile a = generate.Next();
    Profile b = generate.Next();
    ASSERT_EQ(Restrict(a, b), Restrict(b, a)) << Show(a) << "\n" << Show(b);
  }
}

TEST(RestrictProperty, IdempotentAndSelfMeetIsIdentity) {
  Generator generate(kSeed + 2);
  for (int i = 0; i < kPairs; ++i) {
    Profile a = generate.Next();
    Profile b = generate.Next();
    ASSERT_EQ(Restrict(a, a), a) << Show(a);
    Profile meet = Restrict(a, b);
    ASSERT_EQ(Restrict(meet, b), meet) << Show(a) << "\n" << Show(b);
    ASSERT_EQ(Restrict(meet, meet), meet) << Show(meet);
  }
}

TEST(RestrictProperty, Associative) {
  Generator generate(kSeed + 3);
  for (int i = 0; i < kPairs; ++i) {
    Profile a = generate.Next();
    Profile b = generate.Next();
    Profile c = generate.Next();
    ASSERT_EQ(Restrict(Restrict(a, b), c), Restrict(a, Restrict(b, c)))
        << Show(a) << "\n" << Show(b) << "\n" << Show(c);
  }
}

TEST(RestrictProperty, ResultIsAValidNormalisedProfile) {
  Generator generate(kSeed + 4);
  for (int i = 0; i < kPairs; ++i) {
    Profile meet = Restrict(generate.Next(), generate.Next());
    Result<Profile> again = NewProfile(meet.config());
    ASSERT_TRUE(again.ok()) << again.error().message() << "\n" << Show(meet);
    ASSERT_EQ(again.value(), meet) << Show(meet);
    ASSERT_EQ(Fingerprint(again.value()), Fingerprint(meet));
  }
}

TEST(RestrictProperty, OrderAgreesWithMeetAndMeetIsGreatest) {
  Generator generate(kSeed + 5);
  int nested = 0;
  int lower_bounds = 0;
  for (int i = 0; i < kPairs; ++i) {
    Profile a = generate.Next();
    Profile b = generate.Next();
    // a <= b exactly when restricting a by b changes nothing.
    bool narrower = IsNarrowerOrEqual(a, b);
    nested += narrower ? 1 : 0;
    ASSERT_EQ(narrower, Restrict(a, b) == a) << Show(a) << "\n" << Show(b);
    // Any common lower bound is below the meet.
    Profile c = generate.Next();
    if (IsNarrowerOrEqual(c, a) && IsNarrowerOrEqual(c, b)) {
      ++lower_bounds;
      ASSERT_TRUE(IsNarrowerOrEqual(c, Restrict(a, b))) << Show(a) << "\n" << Show(b) << "\n" << Show(c);
    }
  }
  EXPECT_GT(nested, 0);  // the generator does produce comparable pairs
  EXPECT_GT(lower_bounds, 0);
}

}  // namespace
}  // namespace corral
