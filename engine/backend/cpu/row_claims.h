// How the pool's threads split a product's rows (decode, and prompts of one
// token tile): each thread owns a contiguous share and claims it front to
// back, so its claims follow one another in memory and the kernels' prefetch
// and the hardware prefetchers run on one long stream per thread; a thread
// whose share is done takes claims from the back of the share with the most
// left, so the threads finish together and a thread that was interrupted
// leaves its rows to the others.
//
// Claims from one shared cursor (what this replaced) interleaved the
// threads' ranges: each new range started cold and each thread's prefetch
// ran on into rows the other thread then read. With shares, on two threads
// one stream decoded 5-10% faster (`hearth-cli bench -n 128`, Qwen2.5-0.5B
// and the 1B shape, Q4_K_M, avx512 and avx2) and eight streams' step fell
// from 14.8 to 13.85 ms (`bench_scheduler`, medians of five alternated
// rounds); 256-token prompts were unchanged (docs/many-streams.md).
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>

#include "thread_pool.h"

namespace hearth::backend::cpu {

class RowShares {
 public:
  static constexpr int kMaxShares = 64;

  // `units` claimable units (a kernel's row group or tile) in `shares`
  // contiguous shares of (nearly) equal size.
  RowShares(int64_t units, int shares) : count_(std::clamp(shares, 1, kMaxShares)) {
    for (int s = 0; s < count_; ++s) {
      shares_[s].range.store(pack(units * s / count_, units * (s + 1) / count_), std::memory_order_relaxed);
    }
  }

  int count() const { return count_; }

  // The owner's next claim from the front of share `s`: half of what is left
  // there, at least `min_units`. False once the share is empty.
  bool claim_front(int s, int64_t min_units, int64_t& begin, int64_t& end) {
    std::atomic<uint64_t>& range = shares_[s].range;
    uint64_t cur = range.load(std::memory_order_relaxed);
    for (;;) {
      const int64_t f = front(cur), b = back(cur);
      if (f >= b) return false;
      const int64_t e = std::min(b, f + std::max(min_units, (b - f) / 2));
      if (range.compare_exchange_weak(cur, pack(e, b), std::memory_order_relaxed)) {
        begin = f;
        end = e;
        return true;
      }
    }
  }

  // A claim from the back of the share with the most left: a quarter of it,
  // at least `min_units`. False once every share is empty.
  bool claim_back(int64_t min_units, int64_t& begin, int64_t& end) {
    for (;;) {
      int best = -1;
      int64_t most = 0;
      for (int s = 0; s < count_; ++s) {
        const uint64_t cur = shares_[s].range.load(std::memory_order_relaxed);
        if (back(cur) - front(cur) > most) {
          most = back(cur) - front(cur);
          best = s;
        }
      }
      if (best < 0) return false;
      std::atomic<uint64_t>& range = shares_[best].range;
      uint64_t cur = range.load(std::memory_order_relaxed);
      while (front(cur) < back(cur)) {
        const int64_t f = front(cur), b = back(cur);
        const int64_t nb = std::max(f, b - std::max(min_units, (b - f) / 4));
        if (range.compare_exchange_weak(cur, pack(f, nb), std::memory_order_relaxed)) {
          begin = nb;
          end = b;
          return true;
        }
      }
      // That share emptied meanwhile: look again.
    }
  }

 private:
  // A share's unclaimed units [front, back), packed into one word so that
  // its owner and the other threads claim with one compare-exchange.
  static uint64_t pack(int64_t f, int64_t b) { return static_cast<uint64_t>(f) | static_cast<uint64_t>(b) << 32; }
  static int64_t front(uint64_t v) { return static_cast<int64_t>(v & 0xffffffffu); }
  static int64_t back(uint64_t v) { return static_cast<int64_t>(v >> 32); }

  // One cache line each: the owners claim from their fronts without
  // passing a line between the cores.
  struct alignas(64) Share {
    std::atomic<uint64_t> range;
  };
  std::array<Share, kMaxShares> shares_;
  int count_;
};

// Row ranges [b, e) of `rows` rows in claims of whole multiples of `step`
// rows (16: an interleaved group; 32: a prompt tile), at least `min_claim`
// rows (but the last), spread over the pool as RowShares does; fn gets the
// range and the claiming thread.
template <typename Fn>
void for_guided_rows(ThreadPool& pool, int64_t rows, int64_t min_claim, int64_t step, const Fn& fn) {
  const int64_t units = (rows + step - 1) / step;
  const int64_t min_units = std::max<int64_t>(1, (min_claim + step - 1) / step);
  RowShares shares(units, pool.size());
  pool.parallel_for(pool.size(), 1, [&](int64_t, int64_t, int thread) {
    int64_t b = 0, e = 0;
    while (shares.claim_front(thread % shares.count(), min_units, b, e)) {
      fn(b * step, std::min(rows, e * step), thread);
    }
    while (shares.claim_back(min_units, b, e)) fn(b * step, std::min(rows, e * step), thread);
  });
}

}  // namespace hearth::backend::cpu
