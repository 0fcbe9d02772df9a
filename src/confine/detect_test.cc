// Backend detection: the order of candidates, at most one probe per backend
// per process, forced backends, and a broken bwrap counting as unavailable.
#include "confine/detect.h"
#include "exec/backend_probes.h"

#include <sys/stat.h>

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "testing/provider_test_support.h"
#include "confine/unavailable_provider.h"

namespace corral {
namespace {

using testing::TestTree;

struct ProbeLog {
  std::atomic<int> native{0}, bubblewrap{0}, seatbelt{0};
};

class FakeProbes final : public BackendProbes {
 public:
  FakeProbes(ProbeLog* log, bool native_ok, bool bwrap_ok) : log_(log), native_ok_(native_ok), bwrap_ok_(bwrap_ok) {}
  ProbeVerdict Native() override {
    ++log_->native;
    return {native_ok_, native_ok_ ? "fake native works" : "fake native refused"};
  }
  ProbeVerdict Bubblewrap(const std::string& bwrap) override {
    ++log_->bubblewrap;
    return {bwrap_ok_, bwrap + (bwrap_ok_ ? " works" : " is broken")};
  }
  ProbeVerdict Seatbelt() override {
    ++log_->seatbelt;
    return {false, "not macOS"};
  }

 private:
  ProbeLog* log_;
  bool native_ok_, bwrap_ok_;
};

// An executable file standing in for bwrap (the fake probes never run it).
std::string FakeBwrap(const TestTree& tree) {
  std::string path = tree.File("bin/bwrap", "#!/bin/sh\nexit 1\n");
  ::chmod(path.c_str(), 0755);
  return path;
}

DetectOptions Options(const std::string& bwrap) {
  DetectOptions options;
  options.corral_path = "/usr/bin/corral";
  options.bwrap_path = bwrap;
  return options;
}

TEST(Detector, NativeWinsWhenItsProbeSucceeds) {
  TestTree tree;
  ProbeLog log;
  Detector detector(std::make_unique<FakeProbes>(&log, true, true));
  Result<Detection> found = detector.Detect(Options(FakeBwrap(tree)));
  ASSERT_TRUE(found.ok()) << found.error().ToString();
  EXPECT_EQ(found->backend, "native");
  EXPECT_EQ(found->provider->name(), "native");
  EXPECT_NE(found->reason.find("fake native works"), std::string::npos) << found->reason;
  EXPECT_EQ(log.bubblewrap, 0);  // never probed once native won
}

TEST(Detector, ProbesEachBackendAtMostOnce) {
  TestTree tree;
  ProbeLog log;
  Detector detector(std::make_unique<FakeProbes>(&log, false, true));
  for (int i = 0; i < 3; ++i) {
    Result<Detection> found = detector.Detect(Options(FakeBwrap(tree)));
    ASSERT_TRUE(found.ok());
    EXPECT_EQ(found->backend, "bubblewrap");
  }
  EXPECT_EQ(log.native, 1);
  EXPECT_EQ(log.bubblewrap, 1);
  EXPECT_EQ(detector.probes_run(), 2);
}

TEST(Detector, ConcurrentCallersShareOneProbe) {
  TestTree tree;
  ProbeLog log;
  Detector detector(std::make_unique<FakeProbes>(&log, true, true));
  DetectOptions options = Options(FakeBwrap(tree));
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) threads.emplace_back([&] { (void)detector.Detect(options); });
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(log.native, 1);
}

TEST(Detector, BrokenBwrapCountsAsUnavailable) {
  TestTree tree;
  ProbeLog log;
  Detector detector(std::make_unique<FakeProbes>(&log, false, false));
  Result<Detection> found = detector.Detect(Options(FakeBwrap(tree)));
  ASSERT_TRUE(found.ok());
  EXPECT_EQ(found->backend, "unavailable");
  ASSERT_EQ(found->tried.size(), 2u);
  EXPECT_NE(found->tried[1].find("is broken"), std::string::npos) << found->tried[1];
  Result<Policy> policy = testing::BuildTestPolicy(tree.Dir("ws"));
  ASSERT_TRUE(policy.ok()) << policy.error().ToString();
  Result<ConfinedArgv> confined = found->provider->Confine({"true"}, *policy);
  ASSERT_FALSE(confined.ok());
  EXPECT_EQ(confined.error().code(), kSandboxUnavailableCode);
}

TEST(Detector, BwrapFallbackWrapsOnlyABestEffortPolicy) {
  // Detection falls back to bwrap exactly when native cannot reach the full
  // level; bwrap is partial, so a policy that requires full enforcement is
  // refused, as native would refuse it.
  TestTree tree;
  ProbeLog log;
  Detector detector(std::make_unique<FakeProbes>(&log, false, true));
  Result<Detection> found = detector.Detect(Options(FakeBwrap(tree)));
  ASSERT_TRUE(found.ok());
  ASSERT_EQ(found->backend, "bubblewrap");
  Result<Policy> required = testing::BuildTestPolicy(tree.Dir("ws"));
  ASSERT_TRUE(required.ok()) << required.error().ToString();
  Result<ConfinedArgv> refused = found->provider->Confine({"true"}, *required);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code(), kPartialEnforcementCode);
  Result<Policy> best_effort = testing::BuildBestEffortTestPolicy(tree.Dir("ws"));
  ASSERT_TRUE(best_effort.ok()) << best_effort.error().ToString();
  Result<ConfinedArgv> partial = found->provider->Confine({"true"}, *best_effort);
  ASSERT_TRUE(partial.ok()) << partial.error().ToString();
  EXPECT_EQ(partial->coverage, ConfinedArgv::Coverage::kPartial);
  EXPECT_FALSE(partial->gaps.empty());

  // The refusal says why bwrap was chosen; other errors are left alone.
  Error explained = WithDetectionContext(refused.error(), *found);
  EXPECT_EQ(explained.code(), kPartialEnforcementCode);
  EXPECT_EQ(explained.kind(), ErrorKind::kUnsupported);
  EXPECT_NE(explained.message().find("[detection chose bubblewrap; tried: native: fake native refused; "),
            std::string::npos)
      << explained.message();
  Error other = WithDetectionContext(UnavailableProvider("why").Confine({"true"}, *required).error(), *found);
  EXPECT_EQ(other.message(), "no usable sandbox backend (why)");
}

TEST(Detector, MissingBwrapIsNotProbed) {
  TestTree tree;
  ProbeLog log;
  Detector detector(std::make_unique<FakeProbes>(&log, false, true));
  Result<Detection> found = detector.Detect(Options(tree.Join("bin/no-such-bwrap")));
  ASSERT_TRUE(found.ok());
  EXPECT_EQ(found->backend, "unavailable");
  EXPECT_EQ(log.bubblewrap, 0);
  EXPECT_NE(found->reason.find("not installed"), std::string::npos) << found->reason;
}

TEST(Detector, NativeIsSkippedWithoutTheCorralPath) {
  TestTree tree;
  ProbeLog log;
  Detector detector(std::make_unique<FakeProbes>(&log, true, true));
  DetectOptions options = Options(FakeBwrap(tree));
  options.corral_path.clear();
  Result<Detection> found = detector.Detect(options);
  ASSERT_TRUE(found.ok());
  EXPECT_EQ(found->backend, "bubblewrap");
  EXPECT_EQ(log.native, 0);
}

TEST(Detector, ForcedBackendSkipsEveryProbe) {
  TestTree tree;
  ProbeLog log;
  Detector detector(std::make_unique<FakeProbes>(&log, false, false));
  for (const char* name : {"native", "bubblewrap", "seatbelt", "unavailable"}) {
    DetectOptions options = Options(FakeBwrap(tree));
    options.forced = name;
    Result<Detection> found = detector.Detect(options);
    ASSERT_TRUE(found.ok()) << name;
    EXPECT_EQ(found->backend, name);
    EXPECT_NE(found->reason.find("forced"), std::string::npos);
  }
  EXPECT_EQ(detector.probes_run(), 0);
}

TEST(Detector, ForcedNativeOnAHostThatCannotConfineFailsAtConfine) {
  // Forcing skips the probe, never the checks: Confine still compiles for
  // this host. (A weak host is simulated by a best-effort-free policy whose
  // corral path is not absolute, the one check independent of the host.)
  TestTree tree;
  ProbeLog log;
  Detector detector(std::make_unique<FakeProbes>(&log, false, false));
  DetectOptions options = Options(FakeBwrap(tree));
  options.forced = "native";
  options.corral_path = "corral";
  Result<Detection> found = detector.Detect(options);
  ASSERT_TRUE(found.ok());
  Result<Policy> policy = testing::BuildTestPolicy(tree.Dir("ws"));
  ASSERT_TRUE(policy.ok()) << policy.error().ToString();
  EXPECT_FALSE(found->provider->Confine({"true"}, *policy).ok());
}

TEST(Detector, UnknownForcedBackendIsAUsageError) {
  ProbeLog log;
  Detector detector(std::make_unique<FakeProbes>(&log, true, true));
  DetectOptions options = Options("/usr/bin/bwrap");
  options.forced = "firejail";
  Result<Detection> found = detector.Detect(options);
  ASSERT_FALSE(found.ok());
  EXPECT_EQ(found.error().kind(), ErrorKind::kUsage);
  EXPECT_EQ(found.error().code(), "unknown_backend");
}

TEST(CheckRunnerBackend, RunsOnlyUnderNativeOrAuto) {
  EXPECT_TRUE(CheckRunnerBackend("auto").ok());
  EXPECT_TRUE(CheckRunnerBackend("native").ok());
  Status unavailable = CheckRunnerBackend("unavailable");
  ASSERT_FALSE(unavailable.ok());
  EXPECT_EQ(unavailable.error().kind(), ErrorKind::kUnsupported);
  EXPECT_EQ(unavailable.error().code(), kSandboxUnavailableCode);
  for (const char* wrapper : {"bubblewrap", "seatbelt"}) {
    Status refused = CheckRunnerBackend(wrapper);
    ASSERT_FALSE(refused.ok()) << wrapper;
    EXPECT_EQ(refused.error().kind(), ErrorKind::kUnsupported);
    EXPECT_EQ(refused.error().code(), "backend_not_runnable");
    EXPECT_NE(refused.error().message().find(std::string("corral wrap --backend ") + wrapper), std::string::npos)
        << refused.error().message();
  }
  Status unknown = CheckRunnerBackend("firejail");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().code(), "unknown_backend");
}

TEST(DetectProvider, TheProcessCachesItsProbes) {
  // The real probes, on this host: whatever wins, a second detection in the
  // same process runs no probe at all.
  DetectOptions options;
  options.corral_path = "/usr/bin/corral";
  Result<Detection> first = DetectProvider(options);
  ASSERT_TRUE(first.ok()) << first.error().ToString();
  int probes = ProcessDetector().probes_run();
  EXPECT_GE(probes, 1);
  Result<Detection> second = DetectProvider(options);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(ProcessDetector().probes_run(), probes);
  EXPECT_EQ(second->backend, first->backend);
  EXPECT_EQ(second->reason, first->reason);
}

TEST(FindOnPath, FindsExecutablesAndRejectsOthers) {
  TestTree tree;
  std::string bwrap = FakeBwrap(tree);
  std::string plain = tree.File("bin/plain", "data");
  EXPECT_EQ(FindOnPath(bwrap), bwrap);
  EXPECT_EQ(FindOnPath(plain), "");
  EXPECT_EQ(FindOnPath(tree.Join("bin/missing")), "");
  EXPECT_EQ(FindOnPath("sh").empty(), false);
  EXPECT_EQ(FindOnPath(""), "");
}

}  // namespace
}  // namespace corral
