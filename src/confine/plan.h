// Plan: compile(Policy, Host) -> exactly what will be enforced.
//
// Compile decides which mechanisms a run uses (namespaces, Landlock at the
// negotiated ABI, seccomp), builds the mount view, and reports honestly:
//   - Level: full (every mechanism the policy needs), degraded (best effort
//     dropped something), none (nothing is enforced);
//   - Guarantees: what the policy requires and what this plan provides;
//   - CompileReport: one entry per feature, enforced / narrowed / unavailable.
// When the host cannot provide a required guarantee, Compile refuses with a
// specific error naming the mechanism and what the user can do, unless the
// policy is best-effort; then the dropped mechanisms are listed in the plan.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/result.h"
#include "confine/guarantees.h"
#include "confine/host.h"
#include "confine/mount_plan.h"
#include "kernel/landlock.h"
#include "kernel/namespaces.h"
#include "policy/policy.h"

namespace corral {

enum class Level { kFull, kDegraded, kNone };
std::string_view LevelName(Level level);

enum class FeatureStatus { kEnforced, kNarrowed, kUnavailable };
std::string_view FeatureStatusName(FeatureStatus status);

struct FeatureReport {
  std::string feature;
  FeatureStatus status = FeatureStatus::kEnforced;
  std::string detail;
};

struct CompileReport {
  std::vector<FeatureReport> features;
};

struct Mechanisms {
  bool namespaces = true;
  int landlock_abi = 0;  // 0: Landlock off
  bool seccomp = true;
};

// What the caller may force off, for the best-effort retry after a runtime
// failure (a namespace the sysctls did not forbid but the kernel refused).
struct CompileOptions {
  bool without_namespaces = false;
};

class Plan {
 public:
  const Policy& policy() const { return *policy_; }
  const Mechanisms& mechanisms() const { return mechanisms_; }
  const LandlockRights& landlock() const { return landlock_; }
  const MountPlan& mounts() const { return mounts_; }
  const IdMaps& id_maps() const { return id_maps_; }
  Level level() const { return level_; }
  Guarantees required() const { return required_; }
  Guarantees provided() const { return provided_; }
  const CompileReport& report() const { return report_; }
  // Mechanisms dropped under --best-effort, each with the reason.
  const std::vector<std::string>& dropped() const { return dropped_; }

 private:
  friend Result<Plan> Compile(const Policy&, const HostSupport&, const CompileOptions&);
  const Policy* policy_ = nullptr;
  Mechanisms mechanisms_;
  LandlockRights landlock_;
  MountPlan mounts_;
  IdMaps id_maps_;
  Level level_ = Level::kNone;
  Guarantees required_;
  Guarantees provided_;
  CompileReport report_;
  std::vector<std::string> dropped_;
};

// `policy` must outlive the returned plan.
Result<Plan> Compile(const Policy& policy, const HostSupport& host, const CompileOptions& options = {});

}  // namespace corral
