#include "executor/policy_cache.h"

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
  if (thread_ == nullptr) {
    counts_.not_kept = "this kernel cannot show corral what a derivation looks at (seccomp user notification)";
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
  if (!built->ok()) {
    counts_.not_kept = "the derivation failed";
  } else if (!watch->unwatchable().empty()) {
    counts_.not_kept = watch->unwatchable();
  } else if (watch->Changed()) {
    counts_.not_kept = "something it looked at changed while it was derived";
  } else {
    counts_.not_kept.clear();
    kept_.emplace(Kept{host, spec, std::move(state_dirs), **built, std::move(watch).value()});
  }
  return std::move(*built);
}

PolicyCache::Counts PolicyCache::counts() const {
  std::lock_guard lock(mutex_);
  return counts_;
}

}  // namespace corral::executor
