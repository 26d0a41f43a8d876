// Recent throughput and latency of a backend's generations, for the app's
// status line and Local API page: tokens per second over the last few
// seconds (all requests together) and percentiles of the time between
// consecutive tokens of one request. Thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <mutex>
#include <vector>

namespace hearth::server {

struct LiveFigures {
  double tokens_per_second = 0;
  double inter_token_p50_ms = 0;
  double inter_token_p95_ms = 0;
};

class LiveMeter {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr auto kWindow = std::chrono::seconds(5);
  static constexpr size_t kGaps = 512;  // the most recent inter-token gaps kept

  // A token of some request; `previous` is when that request's last token
  // came (none for its first).
  void token(Clock::time_point now, const Clock::time_point* previous);
  LiveFigures figures(Clock::time_point now) const;

 private:
  mutable std::mutex mutex_;
  std::deque<Clock::time_point> recent_;  // token times within kWindow
  std::vector<double> gaps_ms_;           // ring of kGaps
  size_t next_gap_ = 0;
};

}  // namespace hearth::server
