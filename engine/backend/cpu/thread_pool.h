// A persistent pool of worker threads: created once with the backend, woken for
// each parallel op, never created per token. The calling thread takes part, so
// a pool of N threads starts N-1 workers. Ops of a forward pass arrive a few
// microseconds apart, so workers spin on an atomic generation counter for a
// while before sleeping on a condition variable, and the caller spins for
// completion: a futex round-trip per op would cost more than small ops do.
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
  // from a shared counter (chunked work stealing keeps both cores busy even
  // when one is interrupted). Returns when every chunk is done.
  using RangeFn = std::function<void(int64_t begin, int64_t end, int thread)>;
  void parallel_for(int64_t n, int64_t grain, const RangeFn& fn);

 private:
  void worker_loop(int index);
  void run_chunks(int thread, uint64_t generation);

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  // One job at a time: a second caller (two sessions sharing a backend on
  // different threads) waits instead of overwriting the running job's fields.
  std::mutex job_mutex_;
  std::condition_variable wake_;
  std::atomic<uint64_t> generation_{0};
  std::atomic<int> sleepers_{0};
  std::atomic<bool> stop_{false};

  // The current job. Written before next_ is stored (release) and only
  // rewritten once every chunk of the previous job is done.
  std::atomic<const RangeFn*> fn_{nullptr};
  std::atomic<int64_t> n_{0};
  std::atomic<int64_t> grain_{1};
  std::atomic<int64_t> chunks_{0};
  // High 32 bits: generation; low 32 bits: next chunk to claim. Tagging with
  // the generation lets a worker that wakes late see that its job is over.
  alignas(64) std::atomic<uint64_t> next_{0};
  alignas(64) std::atomic<int64_t> done_{0};
};

}  // namespace hearth::backend::cpu
