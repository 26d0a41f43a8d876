#include "thread_pool.h"

#include <sched.h>

#include <algorithm>
#include <chrono>

namespace hearth::backend::cpu {
namespace {

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// How long an idle worker spins before sleeping: long enough to bridge the
// gap between the ops of one token, short enough not to burn a core between
// requests.
constexpr auto kSpinTime = std::chrono::milliseconds(2);

}  // namespace

ThreadPool::ThreadPool(int threads) {
  const int n = std::max(1, threads);
  workers_.reserve(static_cast<size_t>(n - 1));
  for (int i = 1; i < n; ++i) workers_.emplace_back([this, i] { worker_loop(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(mutex_);
    stop_.store(true);
    generation_.fetch_add(1);
  }
  wake_.notify_all();
  for (auto& w : workers_) w.join();
}

void ThreadPool::run_chunks(int thread, uint64_t generation) {
  const uint64_t tag = generation & 0xffffffffu;
  for (;;) {
    // Claim with a compare-exchange, never a blind increment: a worker still
    // finishing an earlier job must not consume a chunk of the next one.
    uint64_t cur = next_.load(std::memory_order_acquire);
    int64_t chunk = 0;
    for (;;) {
      if ((cur >> 32) != tag) return;  // a later job, or this one is over
      chunk = static_cast<int64_t>(cur & 0xffffffffu);
      if (chunk >= chunks_.load(std::memory_order_relaxed)) return;
      if (next_.compare_exchange_weak(cur, cur + 1, std::memory_order_acq_rel, std::memory_order_acquire)) break;
    }
    // The claim carries our tag and an unfinished chunk, so the caller cannot
    // rewrite the job until we report it done.
    const RangeFn* fn = fn_.load(std::memory_order_relaxed);
    const int64_t n = n_.load(std::memory_order_relaxed);
    const int64_t grain = grain_.load(std::memory_order_relaxed);
    const int64_t begin = chunk * grain;
    (*fn)(begin, std::min(n, begin + grain), thread);
    done_.fetch_add(1, std::memory_order_acq_rel);
  }
}

void ThreadPool::worker_loop(int index) {
  uint64_t seen = 0;
  for (;;) {
    auto deadline = std::chrono::steady_clock::now() + kSpinTime;
    uint32_t spins = 0;
    while (generation_.load(std::memory_order_acquire) == seen) {
      cpu_relax();
      if (++spins % 1024 == 0 && std::chrono::steady_clock::now() > deadline) {
        std::unique_lock lock(mutex_);
        sleepers_.fetch_add(1);
        wake_.wait(lock, [&] { return generation_.load(std::memory_order_acquire) != seen; });
        sleepers_.fetch_sub(1);
        break;
      }
    }
    seen = generation_.load(std::memory_order_acquire);
    if (stop_.load()) return;
    run_chunks(index, seen);
  }
}

void ThreadPool::parallel_for(int64_t n, int64_t grain, const RangeFn& fn) {
  if (n <= 0) return;
  grain = std::max<int64_t>(1, grain);
  if (workers_.empty() || n <= grain) {
    fn(0, n, 0);
    return;
  }
  std::lock_guard job_lock(job_mutex_);
  const uint64_t gen = generation_.load(std::memory_order_relaxed) + 1;
  const int64_t chunks = (n + grain - 1) / grain;
  // Close the previous job's counter before rewriting the job, so a worker
  // still looping over it cannot claim a chunk against the new fields.
  next_.store(((gen & 0xffffffffu) << 32) | 0xffffffffu, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_seq_cst);
  fn_.store(&fn, std::memory_order_relaxed);
  n_.store(n, std::memory_order_relaxed);
  grain_.store(grain, std::memory_order_relaxed);
  chunks_.store(chunks, std::memory_order_relaxed);
  done_.store(0, std::memory_order_relaxed);
  next_.store((gen & 0xffffffffu) << 32, std::memory_order_release);
  {
    // The lock orders the bump against a worker deciding to sleep, so no
    // wake-up is lost.
    std::lock_guard lock(mutex_);
    generation_.store(gen, std::memory_order_release);
  }
  if (sleepers_.load() > 0) wake_.notify_all();
  run_chunks(0, gen);
  // Wait only for chunks other threads are still running; a worker that has
  // not woken up yet holds nothing. Yield after a short spin in case the
  // worker was preempted (laptops run other programs).
  for (uint32_t spins = 0; done_.load(std::memory_order_acquire) != chunks; ++spins) {
    if (spins < 4096) {
      cpu_relax();
    } else {
      sched_yield();
    }
  }
}

}  // namespace hearth::backend::cpu
