// A persistent pool of worker threads: created once with the backend, woken for
// each parallel op, never created per token. The calling thread takes part, so
// a pool of N threads starts N-1 workers.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace hearth::backend::cpu {

class ThreadPool {
 public:
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return static_cast<int>(workers_.size()) + 1; }

  // Calls fn(begin, end, thread) over [0, n) in chunks of `grain` items taken
  // from a shared counter (work stealing by chunks keeps both cores busy even
  // when one is interrupted). Returns when every chunk is done.
  using RangeFn = std::function<void(int64_t begin, int64_t end, int thread)>;
  void parallel_for(int64_t n, int64_t grain, const RangeFn& fn);

 private:
  void worker_loop(int index);
  void run_chunks(int thread);

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable done_;
  uint64_t generation_ = 0;
  bool stop_ = false;
  int active_ = 0;

  // The current job (valid while a generation runs).
  const RangeFn* fn_ = nullptr;
  int64_t n_ = 0;
  int64_t grain_ = 1;
  std::atomic<int64_t> next_{0};
};

}  // namespace hearth::backend::cpu
