#include "run/warm_slot.h"

#include "run/run.h"

namespace corral {

std::shared_ptr<WarmSandbox> WarmSlot::For(const Policy& policy) {
  std::lock_guard lock(mutex_);
  if (off_) return nullptr;
  if (warm_ && warm_->lost()) {
    warm_->Close();
    warm_.reset();
  }
  if (!warm_) {
    Result<std::unique_ptr<WarmSandbox>> started = StartWarm(policy);
    if (!started.ok()) {
      off_ = started.error().ToString();
      return nullptr;
    }
    warm_ = std::move(started).value();
  }
  return warm_;
}

void WarmSlot::After(const std::shared_ptr<WarmSandbox>& used, const std::optional<std::string>& cold_because) {
  if (!used || !cold_because || (*cold_because != "warm_lost" && *cold_because != "policy_changed")) return;
  std::lock_guard lock(mutex_);
  if (warm_ == used) warm_.reset();
}

void WarmSlot::Off(std::string why) {
  std::lock_guard lock(mutex_);
  off_ = std::move(why);
}

void WarmSlot::Close(std::string why) {
  std::lock_guard lock(mutex_);
  off_ = std::move(why);
  if (warm_) warm_->Close();
  warm_.reset();
}

std::optional<std::string> WarmSlot::off_reason() const {
  std::lock_guard lock(mutex_);
  return off_;
}

}  // namespace corral
