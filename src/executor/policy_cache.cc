#include "executor/policy_cache.h"

#include <algorithm>
#include <utility>

namespace corral::executor {

Result<Policy> PolicyCache::Derive(const HostContext& host, const PolicySpec& spec) {
  std::lock_guard lock(mutex_);
  std::vector<std::string> state_dirs = host.OwnStateDirs();  // read from the environment
  if (kept_ && kept_->host == host && kept_->spec == spec && kept_->state_dirs == state_dirs &&
      !kept_->watch.Changed()) {
    ++counts_.reused;
    return kept_->policy;
  }
  kept_.reset();
  ++counts_.derived;
  // After a derivation that could not be watched, the next ones most
  // likely cannot either (the same trees): they derive unobserved, which
  // costs nothing extra, and one is observed again after 2, 4, ... 64.
  if (skip_ > 0) {
    --skip_;
    return BuildPolicy(host, spec);
  }
  if (thread_ == nullptr) {
    counts_.not_kept = no_thread_;
    return BuildPolicy(host, spec);
  }
  Result<NameWatch> watch = NameWatch::Open();
  if (!watch.ok()) {
    counts_.not_kept = watch.error().ToString();
    return BuildPolicy(host, spec);
  }
  std::optional<Result<Policy>> built;
  // Another executor's derivation on the set's thread: this one derives
  // here, unobserved and not kept, rather than wait behind it.
  if (!thread_->Run([&] { built.emplace(BuildPolicy(host, spec)); },
                    [&](const ObservedCall& call) { watch->Observe(call); }, ObservedThread::IfBusy::kReturn)) {
    counts_.not_kept = "the set's derivation thread was busy with another executor's";
    return BuildPolicy(host, spec);
  }
  ++counts_.observed;
  if (!built->ok()) {
    counts_.not_kept = "the derivation failed";
  } else if (!watch->unwatchable().empty()) {
    counts_.not_kept = watch->unwatchable();
    backoff_ = std::min(backoff_ * 2, kMaxBackoff);
    skip_ = backoff_;
  } else if (watch->Changed()) {
    counts_.not_kept = "something it looked at changed while it was derived";
  } else {
    counts_.not_kept.clear();
    backoff_ = 1;
    kept_.emplace(Kept{host, spec, std::move(state_dirs), **built, std::move(watch).value()});
  }
  return std::move(*built);
}

PolicyCache::Counts PolicyCache::counts() const {
  std::lock_guard lock(mutex_);
  return counts_;
}

}  // namespace corral::executor
