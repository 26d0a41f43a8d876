#include "measure/read_bandwidth.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <numeric>
#include <thread>
#include <vector>

namespace hearth::measure {
namespace {

// Sums 64-bit words with independent accumulators so the loop is bound by
// loads, not by the add chain. (An explicit AVX-512 load loop measured no
// higher on the machines tried, so the portable loop is the yardstick.)
uint64_t read_sum(const uint64_t* p, size_t n) {
  uint64_t a = 0, b = 0, c = 0, d = 0, e = 0, f = 0, g = 0, h = 0;
  for (size_t i = 0; i + 8 <= n; i += 8) {
    a += p[i]; b += p[i + 1]; c += p[i + 2]; d += p[i + 3];
    e += p[i + 4]; f += p[i + 5]; g += p[i + 6]; h += p[i + 7];
  }
  return a + b + c + d + e + f + g + h;
}

// Runs `body(begin, end, slot)` on `threads` threads, each over its slice
// of [0, words).
template <typename Body>
void for_slices(int threads, size_t words, Body body) {
  std::vector<std::thread> ts;
  ts.reserve(static_cast<size_t>(threads));
  for (int t = 0; t < threads; ++t) {
    ts.emplace_back([&, t] {
      const size_t b = words * static_cast<size_t>(t) / static_cast<size_t>(threads);
      const size_t e = words * static_cast<size_t>(t + 1) / static_cast<size_t>(threads);
      body(b, e, static_cast<size_t>(t));
    });
  }
  for (auto& t : ts) t.join();
}

}  // namespace

Result<ReadBandwidthProbe> ReadBandwidthProbe::create(int threads, size_t bytes) {
  if (threads < 1) return make_error(ErrorCode::InvalidArgument, "bandwidth probe: threads must be at least 1");
  const size_t words = bytes / sizeof(uint64_t);
  if (words < static_cast<size_t>(threads) * 8) {
    return make_error(ErrorCode::InvalidArgument, fmt::format("bandwidth probe: {} bytes is too small", bytes));
  }
  auto buf = model::HugePageBuffer::allocate(words * sizeof(uint64_t));
  if (!buf.ok()) return make_error(ErrorCode::OutOfMemory, "bandwidth probe: " + buf.error().message);
  // Touch every page from the thread that will read it, so the pages are
  // really there (and local to that reader) before any timing.
  auto* p = reinterpret_cast<uint64_t*>(buf->data());
  for_slices(threads, words, [p](size_t b, size_t e, size_t) {
    for (size_t i = b; i < e; ++i) p[i] = i;
  });
  return ReadBandwidthProbe(std::move(buf).value(), words, threads);
}

double ReadBandwidthProbe::measure(int passes) const {
  using Clock = std::chrono::steady_clock;
  double best = 0;
  std::vector<uint64_t> sums(static_cast<size_t>(threads_));
  const auto* p = reinterpret_cast<const uint64_t*>(buf_.data());
  for (int pass = 0; pass < std::max(passes, 1); ++pass) {
    const auto t0 = Clock::now();
    for_slices(threads_, words_, [&](size_t b, size_t e, size_t slot) { sums[slot] = read_sum(p + b, e - b); });
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    if (s > 0) best = std::max(best, static_cast<double>(bytes()) / s / 1e9);
  }
  // The sums must look used, or the reads could be optimized away.
  volatile uint64_t sink = std::accumulate(sums.begin(), sums.end(), uint64_t{0});
  (void)sink;
  return best;
}

}  // namespace hearth::measure
