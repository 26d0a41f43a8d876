// Row-wise and element-wise ops: cheap next to the matrix products, so one
// straightforward version each, written so the compiler vectorizes the loops.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include <hearth/engine/backend/weight_layout.h>

#include "ops.h"

#if defined(HEARTH_BACKEND_X86) || defined(HEARTH_BACKEND_ARM)
#include "activations_fast.h"
#endif
#include "weight_rows.h"

namespace hearth::backend::cpu {
namespace {

constexpr int64_t kRowGrain = 1;
// Element-wise ops split across the threads only from prompt sizes on: a
// decode step's few rows cost less than waking the other threads.
constexpr int64_t kElementGrain = 16384;

float* f32(const Tensor* t) { return static_cast<float*>(t->data); }

}  // namespace

void op_get_rows(const Node& n, ThreadPool& pool) {
  const Tensor* w = n.src[0];
  const int32_t* ids = static_cast<const int32_t*>(n.src[1]->data);
  const DType wt = w->type;
  const size_t rb = w->row_bytes();
  const int64_t cols = w->ne[0];
  pool.parallel_for(n.dst->ne[1], kRowGrain, [&](int64_t b, int64_t e, int) {
    std::vector<uint8_t> scratch(w->layout == WeightLayout::Plain ? 0 : rb);
    for (int64_t t = b; t < e; ++t) {
      row_to_f32(wt, plain_rows(*w, ids[t], 1, scratch.data()), f32(n.dst) + t * cols, cols);
    }
  });
}

namespace {

// The row loops of RMS norm (and a product's bias add, below), compiled
// also for AVX2 and AVX-512 and picked by the CPU at load time (GCC function
// multiversioning): this file is built for baseline x86-64, where a double
// sum takes two values per instruction. On Qwen2.5-0.5B the baseline loops
// were 2.3% of a 256-token prompt step and 1.6% of an eight-stream decode
// step.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define HEARTH_ROW_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define HEARTH_ROW_CLONES
#endif

// The sum of squares in double, as the reference engine sums it, but in
// eight independent partial sums: one running sum is a chain of dependent
// adds the compiler may not reorder, and it cost 2% of a prompt's time.
HEARTH_ROW_CLONES double sum_of_squares(const float* x, int64_t n) {
  constexpr int kParts = 8;
  double part[kParts] = {};
  int64_t i = 0;
  for (; i + kParts <= n; i += kParts) {
    for (int j = 0; j < kParts; ++j) part[j] += static_cast<double>(x[i + j]) * x[i + j];
  }
  double sum = 0;
  for (; i < n; ++i) sum += static_cast<double>(x[i]) * x[i];
  for (const double p : part) sum += p;
  return sum;
}

// y = x s w (w null: y = x s).
HEARTH_ROW_CLONES void scale_row(const float* __restrict x, float s, const float* __restrict w, float* __restrict y,
                                 int64_t n) {
  if (w) {
    for (int64_t i = 0; i < n; ++i) y[i] = x[i] * s * w[i];
  } else {
    for (int64_t i = 0; i < n; ++i) y[i] = x[i] * s;
  }
}

}  // namespace

void op_rms_norm(const Node& n, ThreadPool& pool) {
  const int64_t width = n.src[0]->ne[0];
  const int64_t group = n.params.group;
  const int64_t groups = n.src[0]->rows() * (width / group);
  const float* w = n.src[1] ? f32(n.src[1]) : nullptr;
  const float eps = n.params.eps;
  pool.parallel_for(groups, 64, [&](int64_t b, int64_t e, int) {
    for (int64_t g = b; g < e; ++g) {
      const float* x = f32(n.src[0]) + g * group;
      float* y = f32(n.dst) + g * group;
      const double sum = sum_of_squares(x, group);
      scale_row(x, 1.0f / std::sqrt(static_cast<float>(sum / static_cast<double>(group)) + eps), w, y, group);
    }
  });
}

void op_add(const Node& n, ThreadPool& pool) {
  const float* a = f32(n.src[0]);
  const float* b = f32(n.src[1]);
  float* y = f32(n.dst);
  pool.parallel_for(n.dst->elements(), kElementGrain, [&](int64_t from, int64_t to, int) {
    for (int64_t i = from; i < to; ++i) y[i] = a[i] + b[i];
  });
}

// Called by the products of ops_matmul.cpp, in the thread that just
// computed the rows; defined here because this file is built with the
// vectorizer (engine/backend/CMakeLists.txt). Scalar, the biases of a
// 256-token prompt's Q projection (Qwen2.5-0.5B) took about 120 us of its
// 560.
HEARTH_ROW_CLONES void add_bias_rows(float* __restrict y, const float* __restrict bias, int64_t rows, int64_t r0,
                                     int64_t nr, int64_t n_tok) {
  for (int64_t t = 0; t < n_tok; ++t) {
    float* __restrict out = y + t * rows + r0;
    const float* __restrict b = bias + r0;
    for (int64_t r = 0; r < nr; ++r) out[r] += b[r];
  }
}

void op_scale(const Node& n, ThreadPool& pool) {
  const float* a = f32(n.src[0]);
  float* y = f32(n.dst);
  const float s = n.params.scalar;
  pool.parallel_for(n.dst->elements(), kElementGrain, [&](int64_t from, int64_t to, int) {
    for (int64_t i = from; i < to; ++i) y[i] = a[i] * s;
  });
}

namespace {

// y = silu(g) * u over n values, with the level's vector kernel.
void swiglu_values(const float* g, const float* u, float* y, int64_t n, const quant::KernelTable& kt) {
#if defined(HEARTH_BACKEND_X86)
  if (kt.level == quant::KernelLevel::Avx512) return swiglu_avx512(g, u, y, n);
  if (kt.level == quant::KernelLevel::Avx2 || kt.level == quant::KernelLevel::AvxVnni) return swiglu_avx2(g, u, y, n);
#elif defined(HEARTH_BACKEND_ARM)
  if (quant::is_neon_level(kt.level)) {
    return swiglu_neon(g, u, y, n);
  }
#else
  (void)kt;
#endif
  for (int64_t i = 0; i < n; ++i) y[i] = g[i] / (1.0f + std::exp(-g[i])) * u[i];
}

}  // namespace

void op_swiglu(const Node& n, ThreadPool& pool, const quant::KernelTable& kt) {
  const float* g = f32(n.src[0]);
  const float* u = f32(n.src[1]);
  float* y = f32(n.dst);
  pool.parallel_for(n.dst->elements(), 4096,
                    [&](int64_t b, int64_t e, int) { swiglu_values(g + b, u + b, y + b, e - b, kt); });
}

// The vector kernels finish a run that is not a whole number of vectors in
// scalar code; op_swiglu's chunks are whole vectors, so a row computed here
// holds the op's own values wherever the row width is a multiple of 16
// (every model's FFN width).
void swiglu_row(const Node& n, int64_t t, float* row, const quant::KernelTable& kt) {
  const int64_t width = n.dst->ne[0];
  swiglu_values(f32(n.src[0]) + t * width, f32(n.src[1]) + t * width, row, width, kt);
}

// gpt-oss's clamped SwiGLU; one formula for every kernel level (its cost is
// small next to the expert products around it).
void op_swiglu_oai(const Node& n, ThreadPool& pool) {
  const int64_t count = n.dst->elements();
  const float* g = f32(n.src[0]);
  const float* u = f32(n.src[1]);
  float* y = f32(n.dst);
  const float alpha = n.params.glu.alpha, limit = n.params.glu.limit;
  pool.parallel_for(count, 4096, [&](int64_t b, int64_t e, int) {
    for (int64_t i = b; i < e; ++i) {
      const float x = std::min(g[i], limit);
      const float up = std::clamp(u[i], -limit, limit);
      y[i] = x / (1.0f + std::exp(-alpha * x)) * (up + 1.0f);
    }
  });
}

void op_geglu(const Node& n, ThreadPool& pool) {
  const int64_t count = n.dst->elements();
  const float* g = f32(n.src[0]);
  const float* u = f32(n.src[1]);
  float* y = f32(n.dst);
  constexpr float kSqrt2OverPi = 0.79788456080286535588f;
  pool.parallel_for(count, 4096, [&](int64_t b, int64_t e, int) {
    for (int64_t i = b; i < e; ++i) {
      const float x = g[i];
      const float gelu = 0.5f * x * (1.0f + std::tanh(kSqrt2OverPi * x * (1.0f + 0.044715f * x * x)));
      y[i] = gelu * u[i];
    }
  });
}

void op_layer_norm(const Node& n, ThreadPool& pool) {
  const int64_t width = n.src[0]->ne[0];
  const float* w = f32(n.src[1]);
  const float* bias = f32(n.src[2]);
  const float eps = n.params.eps;
  pool.parallel_for(n.src[0]->rows(), 16, [&](int64_t b, int64_t e, int) {
    for (int64_t r = b; r < e; ++r) {
      const float* x = f32(n.src[0]) + r * width;
      float* y = f32(n.dst) + r * width;
      // Two passes in double: the variance of values far from zero loses
      // everything to cancellation in one pass of float sums.
      double sum = 0;
      for (int64_t i = 0; i < width; ++i) sum += x[i];
      const double mean = sum / static_cast<double>(width);
      double var = 0;
      for (int64_t i = 0; i < width; ++i) var += (x[i] - mean) * (x[i] - mean);
      const auto inv = static_cast<float>(1.0 / std::sqrt(var / static_cast<double>(width) + eps));
      const auto m = static_cast<float>(mean);
      for (int64_t i = 0; i < width; ++i) y[i] = (x[i] - m) * inv * w[i] + bias[i];
    }
  });
}

void op_gelu(const Node& n, ThreadPool& pool, const quant::KernelTable& kt) {
  const int64_t count = n.dst->elements();
  const float* a = f32(n.src[0]);
  float* y = f32(n.dst);
#if defined(HEARTH_BACKEND_X86)
  if (kt.level == quant::KernelLevel::Avx512) {
    pool.parallel_for(count, 4096, [&](int64_t b, int64_t e, int) { gelu_avx512(a + b, y + b, e - b); });
    return;
  }
  if (kt.level == quant::KernelLevel::Avx2 || kt.level == quant::KernelLevel::AvxVnni) {
    pool.parallel_for(count, 4096, [&](int64_t b, int64_t e, int) { gelu_avx2(a + b, y + b, e - b); });
    return;
  }
#elif defined(HEARTH_BACKEND_ARM)
  if (quant::is_neon_level(kt.level)) {
    pool.parallel_for(count, 4096, [&](int64_t b, int64_t e, int) { gelu_neon(a + b, y + b, e - b); });
    return;
  }
#else
  (void)kt;
#endif
  constexpr float kSqrt2OverPi = 0.79788456080286535588f;
  pool.parallel_for(count, 4096, [&](int64_t b, int64_t e, int) {
    for (int64_t i = b; i < e; ++i) {
      const float x = a[i];
      y[i] = 0.5f * x * (1.0f + std::tanh(kSqrt2OverPi * x * (1.0f + 0.044715f * x * x)));
    }
  });
}

void op_softcap(const Node& n, ThreadPool& pool) {
  const float* a = f32(n.src[0]);
  float* y = f32(n.dst);
  const float cap = n.params.scalar;
  pool.parallel_for(n.dst->elements(), kElementGrain, [&](int64_t from, int64_t to, int) {
    for (int64_t i = from; i < to; ++i) y[i] = cap * std::tanh(a[i] / cap);
  });
}

void op_slice_cols(const Node& n, ThreadPool&) {
  const int64_t rows = n.dst->ne[1];
  const int64_t w = n.dst->ne[0];
  const int64_t sw = n.src[0]->ne[0];
  for (int64_t r = 0; r < rows; ++r) {
    std::memcpy(f32(n.dst) + r * w, f32(n.src[0]) + r * sw + n.params.offset, static_cast<size_t>(w) * 4);
  }
}

void op_last_rows(const Node& n, ThreadPool&) {
  const int64_t skip = n.src[0]->ne[1] - n.dst->ne[1];
  std::memcpy(n.dst->data, f32(n.src[0]) + skip * n.src[0]->ne[0], n.dst->elements() * sizeof(float));
}

namespace {

float yarn_corr_dim(int n_dims, int n_ctx_orig, float n_rot, float base) {
  return static_cast<float>(n_dims) * std::log(static_cast<float>(n_ctx_orig) / (n_rot * 2.0f * 3.14159265358979f)) /
         (2.0f * std::log(base));
}

float yarn_ramp(float low, float high, int i0) {
  const float y = (static_cast<float>(i0 / 2) - low) / std::max(0.001f, high - low);
  return 1.0f - std::min(1.0f, std::max(0.0f, y));
}

}  // namespace

// Follows the published RoPE/YaRN definitions: theta_i = pos * base^(-2i/n_dims)
// (divided by a per-frequency factor where given), interpolated by freq_scale,
// with YaRN's ramp between interpolation and extrapolation and its magnitude scale.
void rope_cos_sin(const RopeParams& p, int32_t position, float* cos_out, float* sin_out) {
  const float theta_scale = std::pow(p.freq_base, -2.0f / static_cast<float>(p.n_dims));
  float corr0 = 0, corr1 = 0;
  if (p.ext_factor != 0.0f) {
    corr0 = std::max(0.0f, std::floor(yarn_corr_dim(p.n_dims, p.n_ctx_orig, p.beta_fast, p.freq_base)));
    corr1 = std::min(static_cast<float>(p.n_dims - 1),
                     std::ceil(yarn_corr_dim(p.n_dims, p.n_ctx_orig, p.beta_slow, p.freq_base)));
  }
  float theta_base = static_cast<float>(position);
  for (int i0 = 0; i0 < p.n_dims; i0 += 2) {
    const float ff = p.freq_factors ? p.freq_factors[i0 / 2] : 1.0f;
    const float theta_extrap = theta_base / ff;
    const float theta_interp = p.freq_scale * theta_extrap;
    float theta = theta_interp;
    float mscale = p.attn_factor;
    if (p.ext_factor != 0.0f) {
      const float mix = yarn_ramp(corr0, corr1, i0) * p.ext_factor;
      theta = theta_interp * (1 - mix) + theta_extrap * mix;
      mscale *= 1.0f + 0.1f * std::log(1.0f / p.freq_scale);
    }
    cos_out[i0 / 2] = std::cos(theta) * mscale;
    sin_out[i0 / 2] = std::sin(theta) * mscale;
    theta_base *= theta_scale;
  }
}

namespace {

// One head's rotation by the position's (cos, sin) pairs, a loop per pairing
// so that each vectorizes (a mode test inside one loop kept it scalar).
// NeoX pairs value i with value i + half.
void rotate_neox(const float* __restrict src, float* __restrict dst, const float* __restrict c,
                 const float* __restrict s, int64_t half) {
  for (int64_t i = 0; i < half; ++i) {
    const float x0 = src[i], x1 = src[i + half];
    dst[i] = x0 * c[i] - x1 * s[i];
    dst[i + half] = x0 * s[i] + x1 * c[i];
  }
}

// Normal pairs adjacent values 2i and 2i + 1.
void rotate_adjacent(const float* __restrict src, float* __restrict dst, const float* __restrict c,
                     const float* __restrict s, int64_t half) {
  for (int64_t i = 0; i < half; ++i) {
    const float x0 = src[2 * i], x1 = src[2 * i + 1];
    dst[2 * i] = x0 * c[i] - x1 * s[i];
    dst[2 * i + 1] = x0 * s[i] + x1 * c[i];
  }
}

}  // namespace

// The planner never places a node's output over its input (their lifetimes
// meet at the node), so source and destination rows never overlap.
void op_rope(const Node& n, ThreadPool& pool, RopeTables& tables) {
  const RopeParams& p = n.params.rope;
  const Tensor* x = n.src[0];
  const int32_t* pos = static_cast<const int32_t*>(n.src[1]->data);
  const int64_t width = x->ne[0];
  const int64_t heads = width / p.head_dim;
  const int64_t half = p.n_dims / 2;
  const float* pairs = tables.get(p, pos, x->ne[1], pool).data();
  pool.parallel_for(x->ne[1], 16, [&](int64_t b, int64_t e, int) {
    for (int64_t t = b; t < e; ++t) {
      const float* c = pairs + t * p.n_dims;
      const float* s = c + half;
      for (int64_t h = 0; h < heads; ++h) {
        const float* src = f32(x) + t * width + h * p.head_dim;
        float* dst = f32(n.dst) + t * width + h * p.head_dim;
        if (p.mode == RopeMode::Normal) {
          rotate_adjacent(src, dst, c, s, half);
        } else {
          rotate_neox(src, dst, c, s, half);
        }
        for (int64_t i = p.n_dims; i < p.head_dim; ++i) dst[i] = src[i];
      }
    }
  });
}

}  // namespace hearth::backend::cpu
