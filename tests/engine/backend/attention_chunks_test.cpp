// The SIMD attention takes keys in fixed 512-position chunks and merges
// them in order; a pass with fewer items than threads spreads one item's
// chunks over the threads. A token's output must not depend on either: the
// same decode query gives the same bits on one thread or several, and alone
// or inside a pass with other sequences (so batched greedy decoding equals
// solo decoding, and a verify pass equals plain decoding).
#include <gtest/gtest.h>
#include <hearth/engine/backend/cpu_backend.h>
#include <hearth/engine/kv/kv_pool.h>

#include <cstring>
#include <vector>

#include "random_values.h"
#include "test_kernel_level.h"

namespace hearth::backend {
namespace {

using testing::random_vec;

// Qwen2.5-0.5B's attention shape: 14 query heads of 64 over 2 KV heads, so a
// decode token is one item (both KV heads share a vector of rows).
constexpr int kHeads = 14, kKvHeads = 2, kHeadDim = 64;
const std::vector<int> kLengths = {1300, 600, 90};  // three sequences: three chunks, two, one

class AttentionChunks : public ::testing::Test {
 protected:
  // A pool holding the sequences' keys and values, each table's blocks
  // taken in turns so they are scattered.
  void fill(Backend& be) {
    auto pool = kv::KvPool::create(be, kv::KvPoolConfig{1, kKvHeads, kHeadDim, DType::F16, 64, 1312});
    ASSERT_TRUE(pool.ok()) << pool.error().message;
    pool_ = std::move(*pool);
    const int tb = pool_->table_blocks();
    tables_.assign(kLengths.size() * static_cast<size_t>(tb), 0);
    for (int b = 0; b < tb; ++b) {
      for (size_t s = 0; s < kLengths.size(); ++s) {
        if (b * 32 < kLengths[s]) {
          auto blk = pool_->allocate();
          ASSERT_TRUE(blk.ok());
          tables_[s * static_cast<size_t>(tb) + static_cast<size_t>(b)] = *blk;
        }
      }
    }
    for (size_t s = 0; s < kLengths.size(); ++s) {
      std::vector<int32_t> seq(static_cast<size_t>(kLengths[s]), static_cast<int32_t>(s)), pos;
      for (int t = 0; t < kLengths[s]; ++t) pos.push_back(t);
      const auto n = static_cast<int64_t>(pos.size());
      auto k = random_vec(static_cast<size_t>(n * kKvHeads * kHeadDim), 11 + static_cast<uint32_t>(s));
      auto v = random_vec(static_cast<size_t>(n * kKvHeads * kHeadDim), 21 + static_cast<uint32_t>(s));
      Graph g;
      g.kv_store(g.input(DType::F32, {kKvHeads * kHeadDim, n, 1, 1}, k.data()),
                 g.input(DType::F32, {kKvHeads * kHeadDim, n, 1, 1}, v.data()),
                 g.input(DType::I32, {n, 1, 1, 1}, pos.data()), pool_->layer_view(0, seq.data(), tables_.data()));
      ASSERT_TRUE(be.compute(g).ok());
    }
  }

  // Each listed sequence's next token (at its length) attending, in one
  // pass; its output rows.
  std::vector<float> decode(Backend& be, const std::vector<int32_t>& seqs, const std::vector<float>& q) {
    std::vector<int32_t> pos;
    for (int32_t s : seqs) pos.push_back(kLengths[static_cast<size_t>(s)] - 1);
    const auto n = static_cast<int64_t>(seqs.size());
    Graph g;
    g.output = g.attention(g.input(DType::F32, {kHeads * kHeadDim, n, 1, 1}, const_cast<float*>(q.data())),
                           g.input(DType::I32, {n, 1, 1, 1}, pos.data()),
                           pool_->layer_view(0, seqs.data(), tables_.data()),
                           AttentionParams{kHeads, kKvHeads, kHeadDim, 0.125f, 0.0f, 0});
    EXPECT_TRUE(be.compute(g).ok());
    return std::vector<float>(g.output->as<float>(), g.output->as<float>() + n * kHeads * kHeadDim);
  }

  std::unique_ptr<kv::KvPool> pool_;
  std::vector<int32_t> tables_;
};

TEST_F(AttentionChunks, ADecodeTokenIsTheSameOnOneThreadOrSeveral) {
  const auto q = random_vec(kHeads * kHeadDim, 31);
  auto one = make_cpu_backend(testing::cpu_options(1));
  fill(*one);
  const std::vector<float> alone = decode(*one, {0}, q);
  for (int threads : {2, 3, 5}) {
    auto be = make_cpu_backend(testing::cpu_options(threads));
    fill(*be);
    const std::vector<float> split = decode(*be, {0}, q);
    ASSERT_EQ(split.size(), alone.size());
    EXPECT_EQ(std::memcmp(split.data(), alone.data(), alone.size() * sizeof(float)), 0) << threads << " threads";
  }
}

TEST_F(AttentionChunks, ADecodeTokenIsTheSameAloneOrInABatch) {
  auto be = make_cpu_backend(testing::cpu_options(2));
  fill(*be);
  // Sequence 0's query alone (one item, its three chunks over both threads),
  // then the same query first in a pass of three sequences (three items,
  // each whole on one thread).
  const auto q0 = random_vec(kHeads * kHeadDim, 41);
  const std::vector<float> alone = decode(*be, {0}, q0);
  std::vector<float> batch_q = q0;
  for (uint32_t seed : {42u, 43u}) {
    const auto more = random_vec(kHeads * kHeadDim, seed);
    batch_q.insert(batch_q.end(), more.begin(), more.end());
  }
  const std::vector<float> batched = decode(*be, {0, 1, 2}, batch_q);
  ASSERT_EQ(batched.size(), 3 * alone.size());
  EXPECT_EQ(std::memcmp(batched.data(), alone.data(), alone.size() * sizeof(float)), 0);
}

}  // namespace
}  // namespace hearth::backend
