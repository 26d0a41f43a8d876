// A stop request that long work polls between its steps: every prefill
// batch, every generated token, every summary step and K-shift, and the
// pieces of a model load. A default Cancellation never stops anything.
#pragma once

#include <atomic>
#include <functional>
#include <utility>

namespace hearth::runtime {

class Cancellation {
 public:
  Cancellation() = default;
  // Not explicit: a flag (or null) converts, as the older interfaces took one.
  Cancellation(const std::atomic<bool>* flag) : flag_(flag) {}  // NOLINT(google-explicit-constructor)
  explicit Cancellation(std::function<bool()> check) : check_(std::move(check)) {}

  bool requested() const {
    if (flag_ != nullptr && flag_->load(std::memory_order_relaxed)) return true;
    return check_ && check_();
  }

 private:
  const std::atomic<bool>* flag_ = nullptr;
  std::function<bool()> check_;
};

}  // namespace hearth::runtime
