// The private tmpfs mounts (/tmp, the isolated $HOME, /dev/shm) hold host
// memory: each is capped. Judged from outside: a write past the cap fails
// with ENOSPC and leaves nothing, the cap is what statfs reports inside, and
// the flag and the config key move it.
#include <algorithm>
#include <sstream>

#include "harness.h"

namespace corral_it {
namespace {

constexpr uint64_t kMiB = 1024ull * 1024;

// (bytes, inodes) of each of /tmp, $HOME and /dev/shm.
using Caps = std::vector<std::pair<uint64_t, uint64_t>>;

class TmpfsSize : public SandboxTest {
 protected:
  // "SIZE INODES" of each of /tmp, $HOME and /dev/shm, one line each, as
  // statfs reports them inside.
  Caps Sizes(const std::vector<std::string>& flags) {
    Outcome outcome =
        RunIn(flags, {"sh", "-c", "for d in /tmp \"$HOME\" /dev/shm; do stat -f -c '%b %S %c' \"$d\"; done"});
    EXPECT_EQ(outcome.exit_code, 0) << outcome.Describe();
    Caps sizes;
    std::istringstream lines(outcome.out);
    uint64_t blocks = 0, block_size = 0, inodes = 0;
    while (lines >> blocks >> block_size >> inodes) sizes.emplace_back(blocks * block_size, inodes);
    return sizes;
  }

  // Writes `mib` MiB to `path` inside; the exit code and stderr.
  Outcome Fill(const std::vector<std::string>& flags, const std::string& path, int mib) {
    return RunIn(flags, {"sh", "-c", "head -c " + std::to_string(mib) + "M /dev/zero > " + path});
  }
};

TEST_F(TmpfsSize, EachPrivateTmpfsIsCappedByDefault) {
  EXPECT_EQ(Sizes({}), (Caps{{1024 * kMiB, 131072}, {1024 * kMiB, 131072}, {256 * kMiB, 32768}}));
}

TEST_F(TmpfsSize, TheFlagSetsTheCap) {
  EXPECT_EQ(Sizes({"--tmpfs-size", "64m"}), (Caps{{64 * kMiB, 8192}, {64 * kMiB, 8192}, {16 * kMiB, 2048}}));
  EXPECT_EQ(Sizes({"--tmpfs-size", "2g"}), (Caps{{2048 * kMiB, 262144}, {2048 * kMiB, 262144}, {512 * kMiB, 65536}}));
}

// A write past the cap fails with ENOSPC inside; under a larger cap the same
// write succeeds.
TEST_F(TmpfsSize, AWritePastTheCapFailsWithNoSpace) {
  for (const char* path : {"/tmp/big", "\"$HOME\"/big", "/dev/shm/big"}) {
    Outcome full = Fill({"--tmpfs-size", "16m"}, path, 20);
    EXPECT_NE(full.exit_code, 0) << path << "\n" << full.Describe();
    EXPECT_NE(full.err.find("No space left on device"), std::string::npos) << path << "\n" << full.Describe();
    Outcome fits = Fill({"--tmpfs-size", "128m"}, path, 20);
    EXPECT_EQ(fits.exit_code, 0) << path << "\n" << fits.Describe();
  }
}

TEST_F(TmpfsSize, TheConfigKeySetsTheCapAndTheFlagOverridesIt) {
  config_.Write("corral/config.toml", "[sandbox]\ntmpfs_size = \"32m\"\n");
  EXPECT_EQ(Sizes({}), (Caps{{32 * kMiB, 4096}, {32 * kMiB, 4096}, {8 * kMiB, 1024}}));
  EXPECT_EQ(Sizes({"--tmpfs-size", "64m"}), (Caps{{64 * kMiB, 8192}, {64 * kMiB, 8192}, {16 * kMiB, 2048}}));
  Outcome explained = Corral({"explain", "--", "true"});
  EXPECT_NE(explained.out.find("32m each for /tmp and $HOME, 8m for /dev/shm"), std::string::npos)
      << explained.Describe();
}

// A project may lower the cap, never raise it: host memory is the user's.
TEST_F(TmpfsSize, AProjectConfigCannotRaiseTheCap) {
  workspace_.Write("corral.toml", "[sandbox]\ntmpfs_size = \"8g\"\n");
  Outcome outcome = RunIn({}, {"touch", outside_ / "ran"});
  EXPECT_NE(outcome.exit_code, 0) << outcome.Describe();
  EXPECT_NE(outcome.err.find("sandbox.tmpfs_size"), std::string::npos) << outcome.Describe();
  EXPECT_FALSE(Exists(outside_ / "ran"));
}

TEST_F(TmpfsSize, ABadSizeIsRefused) {
  for (const char* size : {"0", "1m", "lots", "2t"}) {
    Outcome outcome = RunIn({"--tmpfs-size", size}, {"touch", outside_ / "ran"});
    EXPECT_EQ(outcome.exit_code, 64) << size << "\n" << outcome.Describe();
    EXPECT_NE(outcome.err.find("--tmpfs-size"), std::string::npos) << outcome.Describe();
  }
  EXPECT_FALSE(Exists(outside_ / "ran"));
}

// The native backend of `corral wrap` compiles the size into its policy
// file, so the wrapped run has the same cap.
TEST_F(TmpfsSize, WrapPassesTheSizeThrough) {
  Outcome wrapped = Corral({"wrap", "--json", "--backend", "native", "--tmpfs-size", "48m", "--", "true"});
  ASSERT_EQ(wrapped.exit_code, 0) << wrapped.Describe();
  nlohmann::json report = nlohmann::json::parse(wrapped.out);
  std::vector<std::string> argv = report["argv"];
  auto file = std::find(argv.begin(), argv.end(), "--policy-file");
  ASSERT_NE(file, argv.end());
  nlohmann::json policy = nlohmann::json::parse(ReadFile(*(file + 1)).value_or("{}"));
  EXPECT_EQ(policy["spec"]["tmpfs_size"], 48 * kMiB) << policy.dump();
}

}  // namespace
}  // namespace corral_it
