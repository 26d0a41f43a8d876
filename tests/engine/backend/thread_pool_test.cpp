// The persistent pool runs every index exactly once, job after job, with
// sizes that leave workers late for the next job.
#include <gtest/gtest.h>

#include <atomic>
#include <vector>

#include "../../../engine/backend/cpu/thread_pool.h"

namespace hearth::backend::cpu {
namespace {

TEST(ThreadPool, EveryIndexRunsExactlyOnceAcrossManyJobs) {
  ThreadPool pool(2);
  std::vector<std::atomic<int>> hits(4096);
  for (int job = 0; job < 20000; ++job) {
    const int64_t n = 1 + (job * 7919) % 300;
    const int64_t grain = 1 + job % 5;
    for (int64_t i = 0; i < n; ++i) hits[static_cast<size_t>(i)].store(0);
    pool.parallel_for(n, grain, [&](int64_t b, int64_t e, int) {
      for (int64_t i = b; i < e; ++i) hits[static_cast<size_t>(i)].fetch_add(1);
    });
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hits[static_cast<size_t>(i)].load(), 1) << "job " << job << " index " << i;
  }
}

TEST(ThreadPool, BothThreadsTakePartInLargeJobs) {
  ThreadPool pool(2);
  std::atomic<int> by_worker{0};
  for (int job = 0; job < 50 && by_worker.load() == 0; ++job) {
    pool.parallel_for(256, 1, [&](int64_t, int64_t, int thread) {
      volatile double x = 0;
      for (int k = 0; k < 20000; ++k) x = x + k;
      if (thread != 0) by_worker.fetch_add(1);
    });
  }
  EXPECT_GT(by_worker.load(), 0);
}

}  // namespace
}  // namespace hearth::backend::cpu
