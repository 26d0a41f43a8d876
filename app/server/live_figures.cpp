#include <hearth/server/live_figures.h>

#include <algorithm>

namespace hearth::server {
namespace {

double nearest_rank(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const auto i = static_cast<size_t>(p / 100.0 * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

}  // namespace

void LiveMeter::token(Clock::time_point now, const Clock::time_point* previous) {
  std::lock_guard lock(mutex_);
  recent_.push_back(now);
  while (!recent_.empty() && now - recent_.front() > kWindow) recent_.pop_front();
  if (previous != nullptr) {
    const double gap = std::chrono::duration<double, std::milli>(now - *previous).count();
    if (gaps_ms_.size() < kGaps) {
      gaps_ms_.push_back(gap);
    } else {
      gaps_ms_[next_gap_] = gap;
    }
    next_gap_ = (next_gap_ + 1) % kGaps;
  }
}

LiveFigures LiveMeter::figures(Clock::time_point now) const {
  std::lock_guard lock(mutex_);
  LiveFigures f;
  const auto in_window = std::count_if(recent_.begin(), recent_.end(), [&](auto t) { return now - t <= kWindow; });
  f.tokens_per_second = static_cast<double>(in_window) / std::chrono::duration<double>(kWindow).count();
  f.inter_token_p50_ms = nearest_rank(gaps_ms_, 50);
  f.inter_token_p95_ms = nearest_rank(gaps_ms_, 95);
  return f;
}

}  // namespace hearth::server
