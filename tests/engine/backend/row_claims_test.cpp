// A product's rows split by RowShares: every row computed exactly once, in
// whole steps, whatever the sizes and however late a thread comes; each
// thread's first claims walk its own share front to back; and a thread that
// never comes leaves its share to the others.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "../../../engine/backend/cpu/row_claims.h"

namespace hearth::backend::cpu {
namespace {

struct Claim {
  int64_t begin, end;
  int thread;
};

TEST(RowClaims, EveryRowOnceInWholeStepsAcrossManyJobs) {
  for (int threads : {1, 2, 3, 4}) {
    ThreadPool pool(threads);
    std::vector<std::atomic<int>> hits(20000);
    for (int job = 0; job < 3000; ++job) {
      const int64_t rows = 1 + (job * 7919) % 19000;
      const int64_t step = job % 3 == 0 ? 32 : 16;
      const int64_t min_claim = job % 2 == 0 ? 2 * step : step;
      for (int64_t i = 0; i < rows; ++i) hits[static_cast<size_t>(i)].store(0);
      std::atomic<bool> bad_range{false};
      for_guided_rows(pool, rows, min_claim, step, [&](int64_t b, int64_t e, int) {
        if (b % step != 0 || b >= e || e > rows || (e % step != 0 && e != rows)) bad_range = true;
        for (int64_t i = b; i < e; ++i) hits[static_cast<size_t>(i)].fetch_add(1);
      });
      ASSERT_FALSE(bad_range.load()) << threads << " threads, job " << job;
      for (int64_t i = 0; i < rows; ++i) {
        ASSERT_EQ(hits[static_cast<size_t>(i)].load(), 1) << threads << " threads, job " << job << ", row " << i;
      }
    }
  }
}

TEST(RowClaims, OwnersWalkTheirSharesFrontToBackThenTakeFromTheBack) {
  // Two shares of 100 units; thread 0 claims alone first.
  RowShares shares(200, 2);
  int64_t b = 0, e = 0;
  int64_t next = 0;
  while (shares.claim_front(0, 2, b, e)) {
    EXPECT_EQ(b, next) << "the owner's claims follow one another";
    EXPECT_GE(e - b, std::min<int64_t>(2, 100 - b));
    next = e;
  }
  EXPECT_EQ(next, 100);
  // Then from the back of share 1, which nobody has started: a quarter of it.
  ASSERT_TRUE(shares.claim_back(2, b, e));
  EXPECT_EQ(e, 200);
  EXPECT_EQ(b, 175);
  // Its owner still starts at its front and stops where the taken part begins.
  ASSERT_TRUE(shares.claim_front(1, 2, b, e));
  EXPECT_EQ(b, 100);
  int64_t last = e;
  while (shares.claim_front(1, 2, b, e)) {
    EXPECT_EQ(b, last);
    last = e;
  }
  EXPECT_EQ(last, 175);
  EXPECT_FALSE(shares.claim_back(2, b, e));
}

TEST(RowClaims, AThreadThatNeverComesLeavesItsShareToTheOthers) {
  RowShares shares(1000, 4);
  std::vector<int> hits(1000, 0);
  int64_t b = 0, e = 0;
  // Only the owner of share 2 runs: its own share, then everything else.
  while (shares.claim_front(2, 1, b, e)) {
    for (int64_t i = b; i < e; ++i) ++hits[static_cast<size_t>(i)];
  }
  while (shares.claim_back(1, b, e)) {
    for (int64_t i = b; i < e; ++i) ++hits[static_cast<size_t>(i)];
  }
  for (int64_t i = 0; i < 1000; ++i) ASSERT_EQ(hits[static_cast<size_t>(i)], 1) << "unit " << i;
}

TEST(RowClaims, ThreadsStartInTheirOwnShares) {
  // With a slow first claim, each thread that takes part begins at its own
  // share's front (thread t at t * rows / threads).
  ThreadPool pool(2);
  bool saw_worker = false;
  for (int attempt = 0; attempt < 50 && !saw_worker; ++attempt) {
    std::mutex m;
    std::vector<Claim> claims;
    for_guided_rows(pool, 1024, 16, 16, [&](int64_t b, int64_t e, int thread) {
      {
        std::lock_guard lock(m);
        claims.push_back({b, e, thread});
      }
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    });
    std::vector<int64_t> first(2, -1);
    for (const Claim& c : claims) {
      if (first[static_cast<size_t>(c.thread)] < 0) first[static_cast<size_t>(c.thread)] = c.begin;
    }
    EXPECT_EQ(first[0], 0);
    if (first[1] >= 0) {
      saw_worker = true;
      EXPECT_EQ(first[1], 512);
    }
  }
  EXPECT_TRUE(saw_worker) << "the worker never took part";
}

}  // namespace
}  // namespace hearth::backend::cpu
