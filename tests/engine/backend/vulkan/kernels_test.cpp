// Every kernel against a CPU reference computed here on random data, with
// odd shapes (rows not a multiple of the workgroup, partial tiles, ...).
#include <cmath>
#include <random>

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

TEST_F(VulkanKernels, AddMulWithBroadcastAndScale) {
  const uint32_t n = 1001, b_len = 77;  // 13 rows of 77: b broadcast per row
  const auto a = random_floats(n, rng_), b = random_floats(b_len, rng_);
  Buffer ba = gpu_->upload(a), bb = gpu_->upload(b), add = gpu_->buffer(4 * n), mul = gpu_->buffer(4 * n),
         sc = gpu_->buffer(4 * n);
  gpu_->run([&](Kernels& k, CommandSequence& s) -> Status {
    HEARTH_CHECK(k.add(s, BufferView::whole(ba), BufferView::whole(bb), BufferView::whole(add), n, b_len));
    HEARTH_CHECK(k.mul(s, BufferView::whole(ba), BufferView::whole(bb), BufferView::whole(mul), n, b_len));
    return k.scale(s, BufferView::whole(ba), BufferView::whole(sc), n, -0.375f);
  });
  const auto ga = gpu_->download<float>(add, n), gm = gpu_->download<float>(mul, n), gs = gpu_->download<float>(sc, n);
  for (uint32_t i = 0; i < n; ++i) {
    ASSERT_EQ(ga[i], a[i] + b[i % b_len]);
    ASSERT_EQ(gm[i], a[i] * b[i % b_len]);
    ASSERT_EQ(gs[i], a[i] * -0.375f);
  }
  // Three independent dispatches need no barrier between them.
  EXPECT_EQ(gpu_->seq->stats().barriers, 0u);
}

TEST_F(VulkanKernels, GeluSiluSwiglu) {
  const uint32_t n = 1003;
  const auto x = random_floats(n, rng_, -6.0f, 6.0f), u = random_floats(n, rng_);
  Buffer bx = gpu_->upload(x), bu = gpu_->upload(u), gelu = gpu_->buffer(4 * n), silu = gpu_->buffer(4 * n),
         glu = gpu_->buffer(4 * n);
  gpu_->run([&](Kernels& k, CommandSequence& s) -> Status {
    HEARTH_CHECK(k.activation(s, Activation::Gelu, BufferView::whole(bx), BufferView::whole(gelu), n));
    HEARTH_CHECK(k.activation(s, Activation::Silu, BufferView::whole(bx), BufferView::whole(silu), n));
    return k.swiglu(s, BufferView::whole(bx), BufferView::whole(bu), BufferView::whole(glu), n);
  });
  std::vector<float> want_gelu(n), want_silu(n), want_glu(n);
  for (uint32_t i = 0; i < n; ++i) {
    const double v = x[i];
    want_gelu[i] = static_cast<float>(0.5 * v * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (v + 0.044715 * v * v * v))));
    want_silu[i] = static_cast<float>(v / (1.0 + std::exp(-v)));
    want_glu[i] = static_cast<float>(v / (1.0 + std::exp(-v)) * u[i]);
  }
  expect_near_all(gpu_->download<float>(gelu, n), want_gelu, 1e-5f, 1e-4f, "gelu");
  expect_near_all(gpu_->download<float>(silu, n), want_silu, 1e-5f, 1e-4f, "silu");
  expect_near_all(gpu_->download<float>(glu, n), want_glu, 1e-5f, 1e-4f, "swiglu");
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

TEST_F(VulkanKernels, SoftmaxRows) {
  const uint32_t ncols = 1001, nrows = 3;
  const float scale = 0.7f;
  const auto x = random_floats(ncols * nrows, rng_, -20.0f, 20.0f);
  Buffer bx = gpu_->upload(x), by = gpu_->buffer(4 * x.size());
  gpu_->run([&](Kernels& k, CommandSequence& s) {
    return k.softmax(s, BufferView::whole(bx), BufferView::whole(by), ncols, nrows, scale);
  });
  std::vector<float> want(x.size());
  for (uint32_t r = 0; r < nrows; ++r) {
    double m = -1e30, sum = 0;
    for (uint32_t c = 0; c < ncols; ++c) m = std::max(m, double(x[r * ncols + c]) * scale);
    for (uint32_t c = 0; c < ncols; ++c) sum += std::exp(double(x[r * ncols + c]) * scale - m);
    for (uint32_t c = 0; c < ncols; ++c) {
      want[r * ncols + c] = static_cast<float>(std::exp(double(x[r * ncols + c]) * scale - m) / sum);
    }
  }
  expect_near_all(gpu_->download<float>(by, x.size()), want, 1e-7f, 1e-4f, "softmax");
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

void attention_reference(const std::vector<float>& q, const std::vector<uint16_t>& k, const std::vector<uint16_t>& v,
                         const AttentionShape& s, float scale, std::vector<float>& out) {
  const uint32_t group = s.n_heads / s.n_kv_heads;
  out.assign(s.n_heads * s.head_dim, 0.0f);
  for (uint32_t h = 0; h < s.n_heads; ++h) {
    const uint32_t kvh = h / group;
    std::vector<double> scores(s.n_kv);
    double m = -1e300;
    for (uint32_t p = 0; p < s.n_kv; ++p) {
      double dot = 0;
      for (uint32_t d = 0; d < s.head_dim; ++d) {
        dot += double(q[h * s.head_dim + d]) * testing::from_half(k[(p * s.n_kv_heads + kvh) * s.head_dim + d]);
      }
      scores[p] = dot * scale;
      m = std::max(m, scores[p]);
    }
    double sum = 0;
    for (auto& sc : scores) sum += (sc = std::exp(sc - m));
    for (uint32_t d = 0; d < s.head_dim; ++d) {
      double acc = 0;
      for (uint32_t p = 0; p < s.n_kv; ++p) {
        acc += scores[p] * testing::from_half(v[(p * s.n_kv_heads + kvh) * s.head_dim + d]);
      }
      out[h * s.head_dim + d] = static_cast<float>(acc / sum);
    }
  }
}

TEST_F(VulkanKernels, AttentionDecodeOverF16Cache) {
  // 45 positions cross the 32-position tiles; GQA 4 query heads on 2 KV heads;
  // a single position and head_dim 128 too.
  for (const AttentionShape shape : {AttentionShape{64, 4, 2, 45}, AttentionShape{128, 2, 1, 1},
                                     AttentionShape{80, 3, 3, 70}}) {
    const auto q = random_floats(shape.n_heads * shape.head_dim, rng_, -2.0f, 2.0f);
    const size_t kv_n = size_t{shape.n_kv} * shape.n_kv_heads * shape.head_dim;
    std::vector<uint16_t> k(kv_n), v(kv_n);
    for (auto& e : k) e = testing::to_half(random_floats(1, rng_, -2.0f, 2.0f)[0]);
    for (auto& e : v) e = testing::to_half(random_floats(1, rng_)[0]);
    const float scale = 1.0f / std::sqrt(static_cast<float>(shape.head_dim));
    Buffer bq = gpu_->upload(q), bk = gpu_->upload(k), bv = gpu_->upload(v),
           bo = gpu_->buffer(4 * shape.n_heads * shape.head_dim);
    gpu_->run([&](Kernels& kr, CommandSequence& s) {
      return kr.attention_decode(s, BufferView::whole(bq), BufferView::whole(bk), BufferView::whole(bv),
                                 BufferView::whole(bo), shape, scale);
    });
    std::vector<float> want;
    attention_reference(q, k, v, shape, scale, want);
    expect_near_all(gpu_->download<float>(bo, want.size()), want, 1e-5f, 1e-4f, "attention");
  }
}

}  // namespace
}  // namespace hearth::vulkan
