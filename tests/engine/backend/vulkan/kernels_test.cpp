// Every kernel against a CPU reference computed here on random data, with
// odd shapes (rows not a multiple of the workgroup, partial tiles, ...).
#include <cmath>
#include <random>

#include <hearth/engine/quant/reference.h>

#include "attention_reference.h"
#include "reference_dequant.h"
#include "vulkan_test_env.h"

namespace hearth::vulkan {
namespace {

using testing::Gpu;

std::vector<float> random_floats(size_t n, std::mt19937& rng, float lo = -1.0f, float hi = 1.0f) {
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

void expect_near_all(const std::vector<float>& got, const std::vector<float>& want, float abs_tol, float rel_tol,
                     const char* what) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_NEAR(got[i], want[i], abs_tol + rel_tol * std::fabs(want[i])) << what << " at " << i;
  }
}

class VulkanKernels : public ::testing::Test {
 protected:
  void SetUp() override {
    gpu_ = Gpu::create();
    ASSERT_TRUE(gpu_);
  }
  std::unique_ptr<Gpu> gpu_;
  std::mt19937 rng_{1234};
};

TEST_F(VulkanKernels, AddWithBroadcastAndScale) {
  const uint32_t n = 1001, b_len = 77;  // 13 rows of 77: b broadcast per row
  const auto a = random_floats(n, rng_), b = random_floats(b_len, rng_);
  Buffer ba = gpu_->upload(a), bb = gpu_->upload(b), add = gpu_->buffer(4 * n), sc = gpu_->buffer(4 * n);
  gpu_->run([&](Kernels& k, CommandSequence& s) -> Status {
    HEARTH_CHECK(k.add(s, BufferView::whole(ba), BufferView::whole(bb), BufferView::whole(add), n, b_len));
    return k.scale(s, BufferView::whole(ba), BufferView::whole(sc), n, -0.375f);
  });
  const auto ga = gpu_->download<float>(add, n), gs = gpu_->download<float>(sc, n);
  for (uint32_t i = 0; i < n; ++i) {
    ASSERT_EQ(ga[i], a[i] + b[i % b_len]);
    ASSERT_EQ(gs[i], a[i] * -0.375f);
  }
  // Independent dispatches need no barrier between them.
  EXPECT_EQ(gpu_->seq->stats().barriers, 0u);
}

TEST_F(VulkanKernels, SwigluAndGeglu) {
  const uint32_t n = 1003;
  const auto x = random_floats(n, rng_, -6.0f, 6.0f), u = random_floats(n, rng_);
  Buffer bx = gpu_->upload(x), bu = gpu_->upload(u), swi = gpu_->buffer(4 * n), ge = gpu_->buffer(4 * n);
  gpu_->run([&](Kernels& k, CommandSequence& s) -> Status {
    HEARTH_CHECK(k.glu(s, GluKind::GeGlu, BufferView::whole(bx), BufferView::whole(bu), BufferView::whole(ge), n));
    return k.swiglu(s, BufferView::whole(bx), BufferView::whole(bu), BufferView::whole(swi), n);
  });
  std::vector<float> want_geglu(n), want_swiglu(n);
  for (uint32_t i = 0; i < n; ++i) {
    const double v = x[i];
    want_geglu[i] = static_cast<float>(
        0.5 * v * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (v + 0.044715 * v * v * v))) * u[i]);
    want_swiglu[i] = static_cast<float>(v / (1.0 + std::exp(-v)) * u[i]);
  }
  expect_near_all(gpu_->download<float>(ge, n), want_geglu, 1e-5f, 1e-4f, "geglu");
  expect_near_all(gpu_->download<float>(swi, n), want_swiglu, 1e-5f, 1e-4f, "swiglu");
}

TEST_F(VulkanKernels, RmsNormOddShapes) {
  for (const uint32_t ncols : {77u, 1000u}) {
    const uint32_t nrows = 3;
    const float eps = 1e-5f;
    const auto x = random_floats(ncols * nrows, rng_, -3.0f, 3.0f), w = random_floats(ncols, rng_);
    Buffer bx = gpu_->upload(x), bw = gpu_->upload(w), by = gpu_->buffer(4 * ncols * nrows);
    gpu_->run([&](Kernels& k, CommandSequence& s) {
      return k.rms_norm(s, BufferView::whole(bx), BufferView::whole(bw), BufferView::whole(by), ncols, nrows, eps);
    });
    std::vector<float> want(x.size());
    for (uint32_t r = 0; r < nrows; ++r) {
      double ss = 0;
      for (uint32_t c = 0; c < ncols; ++c) ss += double(x[r * ncols + c]) * x[r * ncols + c];
      const double inv = 1.0 / std::sqrt(ss / ncols + eps);
      for (uint32_t c = 0; c < ncols; ++c) want[r * ncols + c] = static_cast<float>(x[r * ncols + c] * inv * w[c]);
    }
    expect_near_all(gpu_->download<float>(by, x.size()), want, 1e-5f, 1e-4f, "rms_norm");
  }
}

void rope_reference(std::vector<float>& x, const std::vector<int32_t>& pos, const RopeShape& s, RopeStyle style,
                    float base, float fscale) {
  for (uint32_t t = 0; t < s.n_tokens; ++t) {
    for (uint32_t h = 0; h < s.n_heads; ++h) {
      float* v = &x[(t * s.n_heads + h) * s.head_dim];
      for (uint32_t i = 0; i < s.n_dims / 2; ++i) {
        const double theta = pos[t] * double(fscale) * std::pow(double(base), -2.0 * i / s.n_dims);
        const uint32_t i0 = style == RopeStyle::NeoX ? i : 2 * i;
        const uint32_t i1 = style == RopeStyle::NeoX ? i + s.n_dims / 2 : 2 * i + 1;
        const double a = v[i0], b = v[i1];
        v[i0] = static_cast<float>(a * std::cos(theta) - b * std::sin(theta));
        v[i1] = static_cast<float>(a * std::sin(theta) + b * std::cos(theta));
      }
    }
  }
}

TEST_F(VulkanKernels, RopeNormalAndNeoxFullAndPartial) {
  for (const RopeStyle style : {RopeStyle::Normal, RopeStyle::NeoX}) {
    for (const uint32_t n_dims : {64u, 32u}) {
      const RopeShape shape{64, n_dims, 3, 5};
      auto x = random_floats(64 * 3 * 5, rng_);
      const std::vector<int32_t> pos = {0, 1, 7, 100, 257};
      Buffer bx = gpu_->upload(x), bp = gpu_->upload(pos);
      gpu_->run([&](Kernels& k, CommandSequence& s) {
        return k.rope(s, style, BufferView::whole(bx), BufferView::whole(bp), shape, 10000.0f, 1.0f);
      });
      rope_reference(x, pos, shape, style, 10000.0f, 1.0f);
      // Angles up to ~257 rad: float sin/cos of large arguments lose ~1e-4.
      expect_near_all(gpu_->download<float>(bx, x.size()), x, 2e-4f, 1e-3f,
                      style == RopeStyle::NeoX ? "rope neox" : "rope normal");
    }
  }
}

struct AttentionCase {
  KvLayout layout;
  uint32_t n_heads;
  uint32_t n_positions;  // cached positions 0..n-1
  uint32_t n_queries;    // the last n_queries positions are queried (1 = decode)
  AttentionOptions options;
};

TEST_F(VulkanKernels, KvStoreAndAttentionOverPagedF16Cache) {
  const AttentionCase cases[] = {
      // GQA 4/2, 50 positions over shuffled 16-token blocks, decode and batched prefill.
      {{64, 2, 16}, 4, 50, 1, {0.125f, 0.0f, 0}},
      {{64, 2, 16}, 4, 50, 10, {0.125f, 0.0f, 0}},
      // Sliding window and a soft cap on the scores (Gemma 2 style).
      {{64, 2, 16}, 4, 50, 5, {0.125f, 5.0f, 8}},
      // One position; head_dim 128; no grouping with an odd head_dim.
      {{128, 1, 8}, 2, 1, 1, {0.088f, 0.0f, 0}},
      {{80, 3, 32}, 3, 70, 3, {0.11f, 0.0f, 0}},
      // head_dim not a multiple of 8 (the shader's narrow-load path), and odd.
      {{36, 1, 8}, 2, 20, 2, {0.16f, 0.0f, 0}},
      {{33, 1, 8}, 2, 20, 2, {0.17f, 0.0f, 0}},
  };
  for (const auto& c : cases) {
    const KvLayout& l = c.layout;
    const uint32_t n_blocks = (c.n_positions + l.block_tokens - 1) / l.block_tokens;
    // Physical blocks in reverse order (plus one unused) so the table matters.
    std::vector<int32_t> table(n_blocks);
    for (uint32_t b = 0; b < n_blocks; ++b) table[b] = static_cast<int32_t>(n_blocks - b);
    const size_t row = l.head_dim, per_pos = size_t{l.n_kv_heads} * row;
    // Values exactly representable in f16, so the store's rounding cannot matter.
    auto halves = [&](size_t n, float lo, float hi) {
      auto v = random_floats(n, rng_, lo, hi);
      for (auto& e : v) e = testing::from_half(testing::to_half(e));
      return v;
    };
    const auto k = halves(c.n_positions * per_pos, -2.0f, 2.0f), v = halves(c.n_positions * per_pos, -1.0f, 1.0f);
    std::vector<int32_t> all_pos(c.n_positions);
    for (uint32_t p = 0; p < c.n_positions; ++p) all_pos[p] = static_cast<int32_t>(p);
    const size_t cache_bytes = 2ull * (n_blocks + 1) * l.block_tokens * per_pos;
    Buffer bk = gpu_->upload(k), bv = gpu_->upload(v), bpos = gpu_->upload(all_pos), btab = gpu_->upload(table),
           kc = gpu_->buffer(cache_bytes), vc = gpu_->buffer(cache_bytes);
    ASSERT_TRUE(gpu_->transfer->zero(BufferView::whole(kc)).ok());
    ASSERT_TRUE(gpu_->transfer->zero(BufferView::whole(vc)).ok());
    const KvBuffers kv{BufferView::whole(kc), BufferView::whole(vc), BufferView::whole(btab)};

    std::vector<int32_t> qpos;
    for (uint32_t i = c.n_positions - c.n_queries; i < c.n_positions; ++i) qpos.push_back(static_cast<int32_t>(i));
    const auto q = random_floats(size_t{c.n_queries} * c.n_heads * row, rng_, -2.0f, 2.0f);
    Buffer bq = gpu_->upload(q), bqpos = gpu_->upload(qpos), bo = gpu_->buffer(4 * q.size());
    gpu_->run([&](Kernels& kr, CommandSequence& s) -> Status {
      HEARTH_CHECK(kr.kv_store(s, BufferView::whole(bk), BufferView::whole(bv), kv, l, BufferView::whole(bpos),
                               c.n_positions));
      return kr.attention(s, BufferView::whole(bq), kv, l, BufferView::whole(bqpos), BufferView::whole(bo),
                          {c.n_heads, c.n_queries}, c.options);
    });
    EXPECT_EQ(gpu_->seq->stats().barriers, 1u);  // attention reads what kv_store wrote

    // The cache holds each row where the layout says.
    const auto kh = gpu_->download<uint16_t>(kc, cache_bytes / 2);
    for (uint32_t p = 0; p < c.n_positions; ++p) {
      for (uint32_t h = 0; h < l.n_kv_heads; ++h) {
        const size_t at = ((size_t(table[p / l.block_tokens]) * l.n_kv_heads + h) * l.block_tokens + p % l.block_tokens) * row;
        for (uint32_t d = 0; d < row; ++d) {
          ASSERT_EQ(testing::from_half(kh[at + d]), k[p * per_pos + h * row + d]) << "pos " << p << " head " << h;
        }
      }
    }
    const auto want = testing::attention_reference(q, k, v, qpos, l, c.n_heads, c.options);
    expect_near_all(gpu_->download<float>(bo, want.size()), want, 1e-5f, 1e-4f, "attention");
  }
}

// The Q8_0 cache: kv_store must quantize each 32-value block as the CPU's
// Q8_0 quantizer does, and attention must read it back; the reference is the
// CPU quantizer's output, dequantized, through the same reference attention
// (same tolerances as the F16 test).
TEST_F(VulkanKernels, KvStoreAndAttentionOverPagedQ8_0Cache) {
  const AttentionCase cases[] = {
      {{64, 2, 16, DType::Q8_0}, 4, 50, 1, {0.125f, 0.0f, 0}},
      {{64, 2, 16, DType::Q8_0}, 4, 50, 10, {0.125f, 0.0f, 0}},
      {{64, 2, 16, DType::Q8_0}, 4, 50, 5, {0.125f, 5.0f, 8}},
      {{128, 1, 8, DType::Q8_0}, 2, 1, 1, {0.088f, 0.0f, 0}},
      {{96, 3, 32, DType::Q8_0}, 3, 70, 3, {0.11f, 0.0f, 0}},
  };
  for (const auto& c : cases) {
    const KvLayout& l = c.layout;
    const uint32_t n_blocks = (c.n_positions + l.block_tokens - 1) / l.block_tokens;
    std::vector<int32_t> table(n_blocks);
    for (uint32_t b = 0; b < n_blocks; ++b) table[b] = static_cast<int32_t>(n_blocks - b);
    const size_t hd = l.head_dim, per_pos = size_t{l.n_kv_heads} * hd;
    const size_t row_bytes = hd / 32 * 34;
    const auto k = random_floats(c.n_positions * per_pos, rng_, -2.0f, 2.0f);
    const auto v = random_floats(c.n_positions * per_pos, rng_, -1.0f, 1.0f);
    // What the CPU stores, and what it reads back.
    std::vector<uint8_t> kq(c.n_positions * size_t{l.n_kv_heads} * row_bytes), vq(kq.size());
    std::vector<float> kd(k.size()), vd(v.size());
    for (size_t r = 0; r < size_t{c.n_positions} * l.n_kv_heads; ++r) {
      ASSERT_TRUE(quant::quantize_row(DType::Q8_0, &k[r * hd], &kq[r * row_bytes], static_cast<int64_t>(hd)).ok());
      ASSERT_TRUE(quant::quantize_row(DType::Q8_0, &v[r * hd], &vq[r * row_bytes], static_cast<int64_t>(hd)).ok());
      ASSERT_TRUE(quant::dequantize_row(DType::Q8_0, &kq[r * row_bytes], &kd[r * hd], static_cast<int64_t>(hd)).ok());
      ASSERT_TRUE(quant::dequantize_row(DType::Q8_0, &vq[r * row_bytes], &vd[r * hd], static_cast<int64_t>(hd)).ok());
    }
    std::vector<int32_t> all_pos(c.n_positions);
    for (uint32_t p = 0; p < c.n_positions; ++p) all_pos[p] = static_cast<int32_t>(p);
    const size_t cache_bytes = (n_blocks + 1) * size_t{l.block_tokens} * l.n_kv_heads * row_bytes;
    Buffer bk = gpu_->upload(k), bv = gpu_->upload(v), bpos = gpu_->upload(all_pos), btab = gpu_->upload(table),
           kc = gpu_->buffer(cache_bytes), vc = gpu_->buffer(cache_bytes);
    ASSERT_TRUE(gpu_->transfer->zero(BufferView::whole(kc)).ok());
    ASSERT_TRUE(gpu_->transfer->zero(BufferView::whole(vc)).ok());
    const KvBuffers kv{BufferView::whole(kc), BufferView::whole(vc), BufferView::whole(btab)};

    std::vector<int32_t> qpos;
    for (uint32_t i = c.n_positions - c.n_queries; i < c.n_positions; ++i) qpos.push_back(static_cast<int32_t>(i));
    const auto q = random_floats(size_t{c.n_queries} * c.n_heads * hd, rng_, -2.0f, 2.0f);
    Buffer bq = gpu_->upload(q), bqpos = gpu_->upload(qpos), bo = gpu_->buffer(4 * q.size());
    gpu_->run([&](Kernels& kr, CommandSequence& s) -> Status {
      HEARTH_CHECK(kr.kv_store(s, BufferView::whole(bk), BufferView::whole(bv), kv, l, BufferView::whole(bpos),
                               c.n_positions));
      return kr.attention(s, BufferView::whole(bq), kv, l, BufferView::whole(bqpos), BufferView::whole(bo),
                          {c.n_heads, c.n_queries}, c.options);
    });

    // Each row where the layout says, with the CPU quantizer's scale; quants
    // may differ by one step where x / d lands on a rounding boundary.
    const auto kb = gpu_->download<uint8_t>(kc, cache_bytes), vb = gpu_->download<uint8_t>(vc, cache_bytes);
    for (uint32_t p = 0; p < c.n_positions; ++p) {
      for (uint32_t h = 0; h < l.n_kv_heads; ++h) {
        const size_t at = ((size_t(table[p / l.block_tokens]) * l.n_kv_heads + h) * l.block_tokens + p % l.block_tokens) * row_bytes;
        const size_t ref = (size_t{p} * l.n_kv_heads + h) * row_bytes;
        for (size_t blk = 0; blk < hd / 32; ++blk) {
          for (const auto* pair : {&kb, &vb}) {
            const auto& got = *pair;
            const auto& want = pair == &kb ? kq : vq;
            const size_t g = at + 34 * blk, w = ref + 34 * blk;
            ASSERT_EQ(got[g] | (got[g + 1] << 8), want[w] | (want[w + 1] << 8)) << "scale, pos " << p << " head " << h;
            for (size_t j = 2; j < 34; ++j) {
              ASSERT_LE(std::abs(int(int8_t(got[g + j])) - int(int8_t(want[w + j]))), 1) << "pos " << p << " head " << h;
            }
          }
        }
      }
    }
    const auto want = testing::attention_reference(q, kd, vd, qpos, l, c.n_heads, c.options);
    expect_near_all(gpu_->download<float>(bo, want.size()), want, 1e-5f, 1e-4f, "attention q8_0");
  }
}

TEST_F(VulkanKernels, SoftcapAndGeglu) {
  const uint32_t n = 999;
  const auto x = random_floats(n, rng_, -80.0f, 80.0f), u = random_floats(n, rng_);
  Buffer bx = gpu_->upload(x), bu = gpu_->upload(u), cap = gpu_->buffer(4 * n), geglu = gpu_->buffer(4 * n);
  gpu_->run([&](Kernels& k, CommandSequence& s) -> Status {
    HEARTH_CHECK(k.softcap(s, BufferView::whole(bx), BufferView::whole(cap), n, 30.0f));
    return k.glu(s, GluKind::GeGlu, BufferView::whole(bx), BufferView::whole(bu), BufferView::whole(geglu), n);
  });
  std::vector<float> want_cap(n), want_geglu(n);
  for (uint32_t i = 0; i < n; ++i) {
    const double v = x[i];
    want_cap[i] = static_cast<float>(30.0 * std::tanh(v / 30.0));
    want_geglu[i] = static_cast<float>(0.5 * v * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (v + 0.044715 * v * v * v))) * u[i]);
  }
  expect_near_all(gpu_->download<float>(cap, n), want_cap, 1e-5f, 1e-5f, "softcap");
  expect_near_all(gpu_->download<float>(geglu, n), want_geglu, 1e-5f, 1e-4f, "geglu");
}

}  // namespace
}  // namespace hearth::vulkan
