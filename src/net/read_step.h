// ReadStep<T>: what a reader of a growing buffer says about the bytes
// received so far: not enough yet (NeedMore), or a value and how many of the
// bytes it used (the rest belong to what follows). A refusal is an Error
// around it, so every reader returns Result<ReadStep<T>>.
//
//   Result<ReadStep<HttpHead>> step = ReadHttpHead(received);
//   if (!step.ok()) refuse(step.error().message());
//   else if (step->need_more()) wait_for_more();
//   else { use(step->value()); received.erase(0, step->used()); }
#pragma once

#include <cstddef>
#include <optional>
#include <utility>

namespace corral {

template <typename T>
class ReadStep {
 public:
  static ReadStep NeedMore() { return ReadStep(); }
  ReadStep(T value, size_t used) : value_(std::move(value)), used_(used) {}

  bool need_more() const { return !value_.has_value(); }
  const T& value() const { return *value_; }
  T& value() { return *value_; }
  // The bytes the value came from; 0 while more are needed.
  size_t used() const { return used_; }

 private:
  ReadStep() = default;
  std::optional<T> value_;
  size_t used_ = 0;
};

}  // namespace corral
