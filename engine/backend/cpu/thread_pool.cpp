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
  for (;;) {
    const uint64_t claim = next_.fetch_add(1, std::memory_order_acq_rel);
    if ((claim >> 32) != (generation & 0xffffffffu)) return;  // a later job, or one already finished
    const auto chunk = static_cast<int64_t>(claim & 0xffffffffu);
    // Read the job under the seqlock; a claim with our generation tag and a
    // chunk index below the count keeps the caller from rewriting it.
    const uint64_t seq = job_seq_.load(std::memory_order_acquire);
    const RangeFn* fn = fn_.load(std::memory_order_relaxed);
    const int64_t n = n_.load(std::memory_order_relaxed);
    const int64_t grain = grain_.load(std::memory_order_relaxed);
    const int64_t chunks = chunks_.load(std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_acquire);
    if (seq != 2 * generation || job_seq_.load(std::memory_order_relaxed) != seq || chunk >= chunks) return;
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
  const uint64_t gen = generation_.load(std::memory_order_relaxed) + 1;
  const int64_t chunks = (n + grain - 1) / grain;
  job_seq_.store(2 * gen - 1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  fn_.store(&fn, std::memory_order_relaxed);
  n_.store(n, std::memory_order_relaxed);
  grain_.store(grain, std::memory_order_relaxed);
  chunks_.store(chunks, std::memory_order_relaxed);
  done_.store(0, std::memory_order_relaxed);
  job_seq_.store(2 * gen, std::memory_order_release);
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
