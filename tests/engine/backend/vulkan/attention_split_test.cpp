// Attention split over positions (flash decoding: Kernels::attention_split,
// attention.comp's slices and attention_combine.comp's merge) against the
// double-sum reference: long caches over shuffled blocks, queries early in
// the cache (their slices are cut from what they see, so short), a window,
// a soft cap and sinks; each query of a multi-query pass is bit for bit its
// one-query result, a short query spreads over the slices, and the split is
// what the tuning asks for.
#include <cmath>
#include <cstring>
#include <random>

#include "attention_reference.h"
#include "vulkan_test_env.h"

namespace hearth::vulkan {
namespace {

using testing::Gpu;

std::vector<float> halves(size_t n, std::mt19937& rng, float lo, float hi) {
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (auto& e : v) e = testing::from_half(testing::to_half(dist(rng)));  // exact in the f16 cache
  return v;
}

struct SplitCase {
  uint32_t n_positions;
  std::vector<int32_t> queries;  // query positions (each sees 0..its position)
  AttentionOptions options;
  bool sinks;
};

class VulkanAttentionSplit : public ::testing::Test {
 protected:
  void SetUp() override {
    gpu_ = Gpu::create();
    ASSERT_TRUE(gpu_);
    KernelTuning t = default_tuning(*gpu_->ctx);
    t.attention_split_positions = 16;  // long for this test: 200 positions -> 8 slices
    t.attention_max_splits = 8;
    kernels_ = std::make_unique<Kernels>(*gpu_->ctx, *gpu_->pipelines, t);
  }
  void TearDown() override { kernels_.reset(); }

  std::unique_ptr<Gpu> gpu_;
  std::unique_ptr<Kernels> kernels_;
  std::mt19937 rng_{77};
};

TEST_F(VulkanAttentionSplit, SlicesMergeToTheReference) {
  const KvLayout l{64, 2, 16};
  constexpr uint32_t n_heads = 4;
  const SplitCase cases[] = {
      {200, {199}, {0.125f, 0.0f, 0}, false},                  // decode at the end of a long cache
      {200, {5, 120, 199}, {0.125f, 0.0f, 0}, false},          // the early query's slices are short
      {200, {150, 199}, {0.125f, 5.0f, 40}, false},            // window and soft cap
      {200, {0, 77, 199}, {0.125f, 0.0f, 0}, true},            // sinks join the merge
  };
  for (const auto& c : cases) {
    const uint32_t n_blocks = (c.n_positions + l.block_tokens - 1) / l.block_tokens;
    std::vector<int32_t> table(n_blocks);
    for (uint32_t b = 0; b < n_blocks; ++b) table[b] = static_cast<int32_t>(n_blocks - b);  // reversed: the table matters
    const size_t per_pos = size_t{l.n_kv_heads} * l.head_dim;
    const auto k = halves(c.n_positions * per_pos, rng_, -2.0f, 2.0f);
    const auto v = halves(c.n_positions * per_pos, rng_, -1.0f, 1.0f);
    std::vector<int32_t> all_pos(c.n_positions);
    for (uint32_t p = 0; p < c.n_positions; ++p) all_pos[p] = static_cast<int32_t>(p);
    const size_t cache_bytes = 2ull * (n_blocks + 1) * l.block_tokens * per_pos;
    Buffer bk = gpu_->upload(k), bv = gpu_->upload(v), bpos = gpu_->upload(all_pos), btab = gpu_->upload(table),
           kc = gpu_->buffer(cache_bytes), vc = gpu_->buffer(cache_bytes);
    const KvBuffers kv{BufferView::whole(kc), BufferView::whole(vc), BufferView::whole(btab)};
    std::uniform_real_distribution<float> sink_dist(-1.0f, 3.0f);
    std::vector<float> sinks(n_heads);
    for (auto& s : sinks) s = sink_dist(rng_);
    Buffer bsinks = gpu_->upload(sinks);

    const auto n_q = static_cast<uint32_t>(c.queries.size());
    const uint32_t visible = c.options.window > 0 ? c.options.window : c.n_positions;
    const AttentionSplit want_split = kernels_->attention_split(n_q, visible);
    ASSERT_GT(want_split.n_splits, 1u);
    ASSERT_GE(uint64_t{want_split.n_splits} * want_split.split_len, visible);

    std::uniform_real_distribution<float> qdist(-2.0f, 2.0f);
    std::vector<float> q(size_t{n_q} * n_heads * l.head_dim);
    for (auto& e : q) e = qdist(rng_);
    // All queries in one pass, then each alone.
    auto run = [&](const std::vector<float>& qs, const std::vector<int32_t>& pos) {
      const auto n = static_cast<uint32_t>(pos.size());
      AttentionSplit split = kernels_->attention_split(n, visible);
      Buffer bq = gpu_->upload(qs), bqpos = gpu_->upload(pos), bo = gpu_->buffer(4 * qs.size()),
             partials = gpu_->buffer(Kernels::attention_partial_bytes(l.head_dim, n_heads, n, split.n_splits));
      split.partials = BufferView::whole(partials);
      EXPECT_TRUE(gpu_->seq->begin().ok());
      Status st = kernels_->kv_store(*gpu_->seq, BufferView::whole(bk), BufferView::whole(bv), kv, l,
                                     BufferView::whole(bpos), c.n_positions);
      if (st.ok()) {
        st = kernels_->attention(*gpu_->seq, BufferView::whole(bq), kv, l, BufferView::whole(bqpos),
                                 BufferView::whole(bo), {n_heads, n}, c.options,
                                 c.sinks ? BufferView::whole(bsinks) : BufferView{}, {}, split);
      }
      EXPECT_TRUE(st.ok()) << (st.ok() ? "" : st.error().message);
      EXPECT_TRUE(gpu_->seq->end().ok());
      EXPECT_TRUE(gpu_->seq->submit_and_wait().ok());
      EXPECT_EQ(gpu_->seq->stats().dispatches, 3u);  // store, slices, merge
      return gpu_->download<float>(bo, qs.size());
    };
    const auto got = run(q, c.queries);
    const auto want = testing::attention_reference(q, k, v, c.queries, l, n_heads, c.options, c.sinks ? &sinks : nullptr);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      ASSERT_NEAR(got[i], want[i], 1e-5f + 1e-4f * std::fabs(want[i])) << "at " << i << " (" << n_q << " queries)";
    }
    const size_t per_query = size_t{n_heads} * l.head_dim;
    for (uint32_t t = 0; t < n_q; ++t) {
      const std::vector<float> qt(q.begin() + std::ptrdiff_t(t * per_query), q.begin() + std::ptrdiff_t((t + 1) * per_query));
      const auto alone = run(qt, {c.queries[t]});
      ASSERT_EQ(std::memcmp(alone.data(), got.data() + t * per_query, 4 * per_query), 0)
          << "query " << t << " differs from its one-query pass";
    }
  }
}

// A query at position 20 of a 200-position table: its 21 visible positions
// go 3 to each of the first 7 of 8 slices (each slice's sum l > 0), not all
// to the first, which slices of the whole table (25 each) would do.
TEST_F(VulkanAttentionSplit, AShortQuerySpreadsOverTheSlices) {
  const KvLayout l{64, 2, 16};
  constexpr uint32_t n_heads = 4, n_positions = 200, query = 20;
  const uint32_t n_blocks = n_positions / l.block_tokens + 1;
  std::vector<int32_t> table(n_blocks);
  for (uint32_t b = 0; b < n_blocks; ++b) table[b] = static_cast<int32_t>(b);
  const size_t per_pos = size_t{l.n_kv_heads} * l.head_dim;
  const auto k = halves(n_positions * per_pos, rng_, -2.0f, 2.0f);
  const auto v = halves(n_positions * per_pos, rng_, -1.0f, 1.0f);
  std::vector<int32_t> all_pos(n_positions);
  for (uint32_t p = 0; p < n_positions; ++p) all_pos[p] = static_cast<int32_t>(p);
  const size_t cache_bytes = 2ull * (n_blocks + 1) * l.block_tokens * per_pos;
  Buffer bk = gpu_->upload(k), bv = gpu_->upload(v), bpos = gpu_->upload(all_pos), btab = gpu_->upload(table),
         kc = gpu_->buffer(cache_bytes), vc = gpu_->buffer(cache_bytes);
  const KvBuffers kv{BufferView::whole(kc), BufferView::whole(vc), BufferView::whole(btab)};
  AttentionSplit split = kernels_->attention_split(1, n_positions);
  ASSERT_EQ(split.n_splits, 8u);
  std::vector<float> q(size_t{n_heads} * l.head_dim);
  std::uniform_real_distribution<float> qdist(-2.0f, 2.0f);
  for (auto& e : q) e = qdist(rng_);
  Buffer bq = gpu_->upload(q), bqpos = gpu_->upload(std::vector<int32_t>{query}), bo = gpu_->buffer(4 * q.size()),
         partials = gpu_->buffer(Kernels::attention_partial_bytes(l.head_dim, n_heads, 1, split.n_splits));
  split.partials = BufferView::whole(partials);
  ASSERT_TRUE(gpu_->seq->begin().ok());
  Status st = kernels_->kv_store(*gpu_->seq, BufferView::whole(bk), BufferView::whole(bv), kv, l,
                                 BufferView::whole(bpos), n_positions);
  if (st.ok()) {
    st = kernels_->attention(*gpu_->seq, BufferView::whole(bq), kv, l, BufferView::whole(bqpos),
                             BufferView::whole(bo), {n_heads, 1}, {0.125f, 0.0f, 0}, BufferView{}, {}, split);
  }
  ASSERT_TRUE(st.ok()) << st.error().message;
  ASSERT_TRUE(gpu_->seq->end().ok());
  ASSERT_TRUE(gpu_->seq->submit_and_wait().ok());
  const size_t part = l.head_dim + 2;  // head_dim values, then m and l
  const auto got = gpu_->download<float>(partials, size_t{n_heads} * split.n_splits * part);
  for (uint32_t h = 0; h < n_heads; ++h) {
    for (uint32_t z = 0; z < split.n_splits; ++z) {
      const float sum = got[(h * split.n_splits + z) * part + l.head_dim + 1];
      if (z < 7) {
        EXPECT_GT(sum, 0.0f) << "head " << h << " slice " << z << " is empty";
      } else {
        EXPECT_EQ(sum, 0.0f) << "head " << h << " slice " << z << " has positions past the query";
      }
    }
  }
  const auto out = gpu_->download<float>(bo, q.size());
  const auto want = testing::attention_reference(q, k, v, {query}, l, n_heads, {0.125f, 0.0f, 0}, nullptr);
  for (size_t i = 0; i < out.size(); ++i) ASSERT_NEAR(out[i], want[i], 1e-5f + 1e-4f * std::fabs(want[i])) << "at " << i;
}

TEST_F(VulkanAttentionSplit, SplitFollowsTheTuning) {
  // Short caches, and more queries than a verify pass holds, stay whole.
  EXPECT_EQ(kernels_->attention_split(1, 16).n_splits, 1u);
  EXPECT_EQ(kernels_->attention_split(Kernels::kMatvecMaxTokens + 1, 4096).n_splits, 1u);
  // 50 positions in slices of about 16: 4 slices of 13.
  const AttentionSplit s = kernels_->attention_split(1, 50);
  EXPECT_EQ(s.n_splits, 4u);
  EXPECT_EQ(s.split_len, 13u);
  // Capped at attention_max_splits; the same for every verify-pass size.
  for (uint32_t n = 1; n <= Kernels::kMatvecMaxTokens; ++n) {
    const AttentionSplit big = kernels_->attention_split(n, 100000);
    EXPECT_EQ(big.n_splits, 8u);
    EXPECT_EQ(big.split_len, 12500u);
  }
  // The device default: CPU devices never split.
  const KernelTuning dflt = default_tuning(*gpu_->ctx);
  EXPECT_EQ(dflt.attention_split_positions, gpu_->ctx->description().kind == DeviceKind::Software ? 0u : 64u);
}

}  // namespace
}  // namespace hearth::vulkan
