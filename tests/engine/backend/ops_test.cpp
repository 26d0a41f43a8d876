// CPU backend ops against direct computations of their definitions.
#include <gtest/gtest.h>
#include <hearth/engine/backend/cpu_backend.h>
#include <hearth/engine/kv/kv_cache.h>
#include <hearth/engine/quant/reference.h>
#include <hearth/engine/quant/types.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <initializer_list>
#include <numeric>
#include <random>
#include <string>

#include "test_kernel_level.h"
#include "random_values.h"

namespace hearth::backend {
namespace {

using testing::random_vec;

struct RopeCase {
  RopeMode mode;
  float freq_scale;
};

class RopeTest : public ::testing::TestWithParam<RopeCase> {};

// theta_i = pos * scale * base^(-2i/d); pairs (2i, 2i+1) or (i, i+d/2).
TEST_P(RopeTest, RotatesPairsByThePublishedAngles) {
  const int hd = 16, heads = 3, n = 5;
  auto x = random_vec(static_cast<size_t>(hd * heads * n), 1);
  std::vector<int32_t> pos{0, 1, 7, 100, 4095};
  RopeParams p;
  p.mode = GetParam().mode;
  p.n_dims = hd;
  p.head_dim = hd;
  p.freq_base = 10000.0f;
  p.freq_scale = GetParam().freq_scale;
  Graph g;
  Tensor* in = g.input(DType::F32, {hd * heads, n, 1, 1}, x.data());
  Tensor* ps = g.input(DType::I32, {n, 1, 1, 1}, pos.data());
  g.output = g.rope(in, ps, p);
  auto be = make_cpu_backend(testing::cpu_options(2));
  ASSERT_TRUE(be->compute(g).ok());
  const float* y = g.output->as<const float>();
  for (int t = 0; t < n; ++t) {
    for (int h = 0; h < heads; ++h) {
      for (int i = 0; i < hd / 2; ++i) {
        const double theta = pos[t] * double(p.freq_scale) * std::pow(10000.0, -2.0 * i / hd);
        const int a = p.mode == RopeMode::Normal ? 2 * i : i;
        const int b = p.mode == RopeMode::Normal ? 2 * i + 1 : i + hd / 2;
        const size_t base = static_cast<size_t>((t * heads + h) * hd);
        const double x0 = x[base + a], x1 = x[base + b];
        EXPECT_NEAR(y[base + a], x0 * std::cos(theta) - x1 * std::sin(theta), 2e-3);
        EXPECT_NEAR(y[base + b], x0 * std::sin(theta) + x1 * std::cos(theta), 2e-3);
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Modes, RopeTest,
                         ::testing::Values(RopeCase{RopeMode::Normal, 1.0f}, RopeCase{RopeMode::NeoX, 1.0f},
                                           RopeCase{RopeMode::Normal, 0.25f}));

TEST(RmsNorm, NormalizesEachGroup) {
  const int width = 12, group = 4, rows = 2;
  auto x = random_vec(width * rows, 2);
  auto w = random_vec(group, 3);
  Graph g;
  Tensor* in = g.input(DType::F32, {width, rows, 1, 1}, x.data());
  Tensor* wt = g.input(DType::F32, {group, 1, 1, 1}, w.data());
  g.output = g.rms_norm(in, wt, 1e-6f, group);
  auto be = make_cpu_backend(testing::cpu_options(1));
  ASSERT_TRUE(be->compute(g).ok());
  for (int s = 0; s < width * rows / group; ++s) {
    double ss = 0;
    for (int i = 0; i < group; ++i) ss += x[s * group + i] * x[s * group + i];
    const double r = 1.0 / std::sqrt(ss / group + 1e-6);
    for (int i = 0; i < group; ++i) EXPECT_NEAR(g.output->as<float>()[s * group + i], x[s * group + i] * r * w[i], 1e-5);
  }
}

// Attention cases: cache precision, kernel choice (the scalar path and the
// fastest one, AVX-512 where present), shape, and which positions query.
struct AttentionCase {
  const char* name;
  DType cache;
  KernelChoice kernels;
  int hd, nh, nkv, n, window;
  float cap;
  int queries;  // the last `queries` positions query (n: a whole prefill)
  bool sinks = false;  // per-head sink logits (gpt-oss)
};

class AttentionTest : public ::testing::TestWithParam<AttentionCase> {};

// A cached row as the cache holds it: rounded through its storage type.
std::vector<float> as_cached(const std::vector<float>& x, int hd, DType type) {
  if (type == DType::F32) return x;
  std::vector<float> out(x.size());
  std::vector<uint8_t> row(*row_bytes(type, hd));
  for (size_t r = 0; r * static_cast<size_t>(hd) < x.size(); ++r) {
    EXPECT_TRUE(quant::quantize_row(type, x.data() + r * hd, row.data(), hd).ok());
    EXPECT_TRUE(quant::dequantize_row(type, row.data(), out.data() + r * hd, hd).ok());
  }
  return out;
}

// The keys are stored first (all n positions); then the last `queries`
// positions attend, against the full softmax written out in double.
TEST_P(AttentionTest, MatchesTheFullSoftmax) {
  const AttentionCase c = GetParam();
  const int hd = c.hd, nh = c.nh, nkv = c.nkv, n = c.n, nq = c.queries;
  auto be = make_cpu_backend(testing::cpu_options(2, c.kernels));
  auto cache = kv::KvCache::create(*be, kv::KvCacheConfig{1, nkv, hd, n, c.cache});
  ASSERT_TRUE(cache.ok());
  const KvView view = (*cache)->layer_view(0);
  auto q = random_vec(static_cast<size_t>(nq * nh * hd), 4);
  auto k = random_vec(static_cast<size_t>(n * nkv * hd), 5);
  auto v = random_vec(static_cast<size_t>(n * nkv * hd), 6);
  std::vector<int32_t> pos(static_cast<size_t>(n));
  std::iota(pos.begin(), pos.end(), 0);
  {
    Graph g;
    Tensor* kt = g.input(DType::F32, {nkv * hd, n, 1, 1}, k.data());
    Tensor* vt = g.input(DType::F32, {nkv * hd, n, 1, 1}, v.data());
    Tensor* ps = g.input(DType::I32, {n, 1, 1, 1}, pos.data());
    g.kv_store(kt, vt, ps, view);
    ASSERT_TRUE(be->compute(g).ok());
  }
  const std::vector<float> kc = as_cached(k, hd, c.cache), vc = as_cached(v, hd, c.cache);
  std::vector<int32_t> qpos(pos.end() - nq, pos.end());
  AttentionParams ap{nh, nkv, hd, 0.5f, c.cap, c.window};
  // Sinks from far below to far above the scores (the largest turns most
  // of the weight away from every value).
  std::vector<float> sinks(static_cast<size_t>(nh));
  for (int h = 0; h < nh; ++h) sinks[static_cast<size_t>(h)] = -6.0f + 12.0f * static_cast<float>(h) / std::max(1, nh - 1);
  Graph g;
  Tensor* qt = g.input(DType::F32, {nh * hd, nq, 1, 1}, q.data());
  Tensor* ps = g.input(DType::I32, {nq, 1, 1, 1}, qpos.data());
  Tensor* st = c.sinks ? g.input(DType::F32, {nh, 1, 1, 1}, sinks.data()) : nullptr;
  g.output = g.attention(qt, ps, view, ap, st);
  ASSERT_TRUE(be->compute(g).ok());
  for (int qi = 0; qi < nq; ++qi) {
    const int t = qpos[static_cast<size_t>(qi)];
    for (int h = 0; h < nh; ++h) {
      const int kh = h / (nh / nkv);
      const int first = c.window > 0 ? std::max(0, t - c.window + 1) : 0;
      std::vector<double> s;
      for (int j = first; j <= t; ++j) {
        double d = 0;
        for (int i = 0; i < hd; ++i) d += double(q[(qi * nh + h) * hd + i]) * kc[(j * nkv + kh) * hd + i];
        s.push_back(c.cap > 0 ? c.cap * std::tanh(d * 0.5 / c.cap) : d * 0.5);
      }
      const double mx = *std::max_element(s.begin(), s.end());
      double z = 0;
      for (auto& e : s) z += (e = std::exp(e - mx));
      if (c.sinks) z += std::exp(double(sinks[static_cast<size_t>(h)]) - mx);
      for (int i = 0; i < hd; ++i) {
        double o = 0;
        int idx = 0;
        for (int j = first; j <= t; ++j, ++idx) o += s[idx] / z * vc[(j * nkv + kh) * hd + i];
        ASSERT_NEAR(g.output->as<float>()[(qi * nh + h) * hd + i], o, 1e-4) << "query " << t << " head " << h << " dim " << i;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, AttentionTest,
    ::testing::Values(
        // Three blocks, a sliding window and soft-capping (Gemma 2 style).
        AttentionCase{"f32_window_cap_ref", DType::F32, KernelChoice::Reference, 32, 4, 2, 70, 20, 2.0f, 70},
        AttentionCase{"f32_window_cap_fast", DType::F32, KernelChoice::Fastest, 32, 4, 2, 70, 20, 2.0f, 70},
        // GQA groups of 4 and of 1, causal prefill over several query tiles.
        AttentionCase{"f16_gqa4_ref", DType::F16, KernelChoice::Reference, 64, 8, 2, 75, 0, 0.0f, 75},
        AttentionCase{"f16_gqa4_fast", DType::F16, KernelChoice::Fastest, 64, 8, 2, 75, 0, 0.0f, 75},
        AttentionCase{"q8_0_mha_fast", DType::Q8_0, KernelChoice::Fastest, 64, 3, 3, 41, 0, 0.0f, 41},
        AttentionCase{"q8_0_mha_ref", DType::Q8_0, KernelChoice::Reference, 64, 3, 3, 41, 0, 0.0f, 41},
        // Decode and a short continuation after a cached prefix.
        AttentionCase{"f16_decode_fast", DType::F16, KernelChoice::Fastest, 64, 8, 2, 97, 0, 0.0f, 1},
        AttentionCase{"f16_continue_fast", DType::F16, KernelChoice::Fastest, 96, 6, 2, 66, 0, 0.0f, 5},
        AttentionCase{"q8_0_window_decode_fast", DType::Q8_0, KernelChoice::Fastest, 32, 4, 1, 90, 33, 0.0f, 1},
        // The widest head the SIMD kernels take (Gemma's 256), and one wider,
        // which the scalar kernel computes; key counts that are not whole
        // passes of eight.
        AttentionCase{"f16_hd256_fast", DType::F16, KernelChoice::Fastest, 256, 4, 2, 45, 0, 0.0f, 13},
        AttentionCase{"f32_hd288_fast", DType::F32, KernelChoice::Fastest, 288, 2, 1, 37, 0, 0.0f, 3},
        // Attention sinks (gpt-oss) with a window, prefill and decode, both paths.
        AttentionCase{"f16_sinks_window_ref", DType::F16, KernelChoice::Reference, 64, 4, 2, 70, 16, 0.0f, 70, true},
        AttentionCase{"f16_sinks_window_fast", DType::F16, KernelChoice::Fastest, 64, 4, 2, 70, 16, 0.0f, 70, true},
        AttentionCase{"f32_sinks_decode_ref", DType::F32, KernelChoice::Reference, 32, 6, 3, 41, 0, 0.0f, 1, true},
        AttentionCase{"f32_sinks_decode_fast", DType::F32, KernelChoice::Fastest, 32, 6, 3, 41, 0, 0.0f, 1, true},
        // Few query rows per KV head: several KV heads share a vector of
        // rows (four Llama-like heads of group 4; two Qwen-like heads of
        // group 7 with a window, soft-capping and sinks; two heads of 128;
        // three tokens of group 1 crossing a block edge).
        AttentionCase{"f16_decode_group4_fast", DType::F16, KernelChoice::Fastest, 64, 32, 8, 100, 0, 0.0f, 1},
        AttentionCase{"f32_decode_group7_fast", DType::F32, KernelChoice::Fastest, 32, 14, 2, 90, 33, 2.0f, 1, true},
        AttentionCase{"f16_hd128_two_tokens_fast", DType::F16, KernelChoice::Fastest, 128, 8, 4, 70, 0, 0.0f, 2},
        AttentionCase{"f16_group1_three_tokens_fast", DType::F16, KernelChoice::Fastest, 64, 4, 4, 66, 0, 0.0f, 3},
        // Contexts of several 512-key chunks (merged in order; a decode
        // token with fewer items than threads has its chunks split across
        // them): Qwen-like decode, a window with sinks and soft-capping
        // ending mid-chunk, a Q8_0 cache, and a prefill whose tiles each
        // cross chunks.
        AttentionCase{"f16_decode_group7_long_fast", DType::F16, KernelChoice::Fastest, 64, 14, 2, 1300, 0, 0.0f, 1},
        AttentionCase{"f32_window_sinks_long_fast", DType::F32, KernelChoice::Fastest, 32, 4, 1, 1100, 700, 2.0f, 2, true},
        AttentionCase{"q8_0_decode_long_fast", DType::Q8_0, KernelChoice::Fastest, 64, 4, 2, 529, 0, 0.0f, 1},
        AttentionCase{"f16_prefill_long_fast", DType::F16, KernelChoice::Fastest, 64, 8, 2, 560, 0, 0.0f, 560}),
    [](const auto& p) { return std::string(p.param.name); });

// silu(g) * u with both kernel choices (the AVX-512 path where present),
// over a length that leaves a tail past the 16-wide steps, and gates far
// into both tails of the exponential.
TEST(SwiGlu, MatchesTheDefinition) {
  const int n = 16 * 37 + 5;
  auto g = random_vec(static_cast<size_t>(n), 7);
  auto u = random_vec(static_cast<size_t>(n), 8);
  for (int i = 0; i < n; ++i) g[static_cast<size_t>(i)] *= i % 7 == 0 ? 120.0f : 9.0f;
  for (KernelChoice choice : {KernelChoice::Reference, KernelChoice::Fastest}) {
    auto be = make_cpu_backend(testing::cpu_options(2, choice));
    Graph gr;
    Tensor* gt = gr.input(DType::F32, {n, 1, 1, 1}, g.data());
    Tensor* ut = gr.input(DType::F32, {n, 1, 1, 1}, u.data());
    gr.output = gr.swiglu(gt, ut);
    ASSERT_TRUE(be->compute(gr).ok());
    for (int i = 0; i < n; ++i) {
      const double x = g[static_cast<size_t>(i)];
      const double want = x / (1.0 + std::exp(-x)) * u[static_cast<size_t>(i)];
      ASSERT_NEAR(gr.output->as<float>()[i], want, 1e-6 * std::fabs(want) + 1e-30) << "at " << i << " gate " << x;
    }
  }
}

// gpt-oss's clamped SwiGLU (alpha 1.702, limit 7) against its definition,
// with gates and ups on both sides of the limits.
TEST(SwiGluOai, MatchesTheDefinition) {
  const int n = 16 * 9 + 3;
  auto g = random_vec(static_cast<size_t>(n), 9);
  auto u = random_vec(static_cast<size_t>(n), 10);
  for (int i = 0; i < n; ++i) {
    g[static_cast<size_t>(i)] *= 12.0f;
    u[static_cast<size_t>(i)] *= 12.0f;
  }
  const GluParams p{1.702f, 7.0f};
  for (KernelChoice choice : {KernelChoice::Reference, KernelChoice::Fastest}) {
    auto be = make_cpu_backend(testing::cpu_options(2, choice));
    Graph gr;
    Tensor* gt = gr.input(DType::F32, {n, 1, 1, 1}, g.data());
    Tensor* ut = gr.input(DType::F32, {n, 1, 1, 1}, u.data());
    gr.output = gr.swiglu_oai(gt, ut, p);
    ASSERT_TRUE(be->compute(gr).ok());
    for (int i = 0; i < n; ++i) {
      const double x = std::min<double>(g[static_cast<size_t>(i)], 7.0);
      const double y = std::clamp<double>(u[static_cast<size_t>(i)], -7.0, 7.0);
      const double want = x / (1.0 + std::exp(-1.702 * x)) * (y + 1.0);
      ASSERT_NEAR(gr.output->as<float>()[i], want, 1e-5 * std::fabs(want) + 1e-6) << "at " << i << " gate " << x;
    }
  }
}

// BERT's LayerNorm against its definition (in double), on rows whose mean is
// far from zero, and GELU (tanh form) against its formula.
TEST(LayerNorm, MatchesTheDefinition) {
  const int cols = 67, rows = 5;
  auto x = random_vec(static_cast<size_t>(cols * rows), 31);
  for (auto& v : x) v = v * 2.0f + 40.0f;
  auto w = random_vec(static_cast<size_t>(cols), 32);
  auto b = random_vec(static_cast<size_t>(cols), 33);
  auto be = make_cpu_backend(testing::cpu_options(2, KernelChoice::Fastest));
  Graph gr;
  Tensor* wt = gr.input(DType::F32, {cols, 1, 1, 1}, w.data());
  Tensor* bt = gr.input(DType::F32, {cols, 1, 1, 1}, b.data());
  gr.output = gr.layer_norm(gr.input(DType::F32, {cols, rows, 1, 1}, x.data()), wt, bt, 1e-12f);
  ASSERT_TRUE(be->compute(gr).ok());
  for (int r = 0; r < rows; ++r) {
    double mean = 0, var = 0;
    for (int c = 0; c < cols; ++c) mean += x[static_cast<size_t>(r * cols + c)];
    mean /= cols;
    for (int c = 0; c < cols; ++c) var += std::pow(x[static_cast<size_t>(r * cols + c)] - mean, 2);
    var /= cols;
    for (int c = 0; c < cols; ++c) {
      const auto i = static_cast<size_t>(r * cols + c);
      const double want = (x[i] - mean) / std::sqrt(var + 1e-12) * w[static_cast<size_t>(c)] + b[static_cast<size_t>(c)];
      ASSERT_NEAR(gr.output->as<float>()[i], want, 1e-4 * std::fabs(want) + 1e-4) << "row " << r << " col " << c;
    }
  }
}

TEST(Gelu, MatchesTheTanhFormula) {
  const int n = 301;
  auto x = random_vec(static_cast<size_t>(n), 41);
  for (auto& v : x) v *= 6.0f;
  x.push_back(-40.0f);  // far tails: ~0 and x itself, never NaN
  x.push_back(40.0f);
  for (KernelChoice choice : {KernelChoice::Reference, KernelChoice::Fastest}) {
    auto be = make_cpu_backend(testing::cpu_options(2, choice));
    Graph gr;
    gr.output = gr.gelu(gr.input(DType::F32, {static_cast<int64_t>(x.size()), 1, 1, 1}, x.data()));
    ASSERT_TRUE(be->compute(gr).ok());
    for (size_t i = 0; i < x.size(); ++i) {
      const double v = x[i];
      const double want = 0.5 * v * (1.0 + std::tanh(0.79788456080286535588 * v * (1.0 + 0.044715 * v * v)));
      ASSERT_NEAR(gr.output->as<float>()[i], want, 1e-5 * std::fabs(want) + 1e-6) << "at " << i;
    }
  }
}

// Random weight matrices of the given types (rows of `cols` values) with
// random biases, as a layer's projections are.
struct BiasedWeight {
  DType type;
  std::vector<uint8_t> bytes;
  std::vector<float> bias;
};
std::vector<BiasedWeight> biased_weights(std::initializer_list<DType> types, int64_t cols, int64_t rows, unsigned seed) {
  std::vector<BiasedWeight> ws;
  for (DType type : types) {
    const size_t rb = *row_bytes(type, cols);
    BiasedWeight w{type, std::vector<uint8_t>(rb * static_cast<size_t>(rows)), random_vec(static_cast<size_t>(rows), seed++)};
    const auto values = random_vec(static_cast<size_t>(cols * rows), seed++);
    for (int64_t r = 0; r < rows; ++r) {
      EXPECT_TRUE(quant::quantize_row(type, values.data() + r * cols, w.bytes.data() + static_cast<size_t>(r) * rb, cols).ok());
    }
    ws.push_back(std::move(w));
  }
  return ws;
}

// The products' outputs combined with weights 1, 10, 100, ...: a product
// written to the wrong output, or computed from the wrong input, shows.
Tensor* weighted_sum(Graph& g, const std::vector<Tensor*>& products) {
  Tensor* sum = nullptr;
  float weight = 1.0f;
  for (Tensor* y : products) {
    sum = sum ? g.add(sum, g.scale(y, weight)) : y;
    weight *= 10.0f;
  }
  return sum;
}

// One-token products of one input (as Q, K, V are: mixed weight types that
// share the activation format, biases, row counts that are not multiples of
// the kernels' passes) run as one group on the fast kernels; each output must
// equal the scalar reference backend's, which runs them one by one. The
// outputs are combined with different weights, so a product written to the
// wrong output would show.
TEST(MatMul, DecodeProductsOfOneInputMatchTheScalarReference) {
  constexpr int64_t kCols = 256, kRows = 45;
  const auto x = random_vec(kCols, 21);
  std::vector<BiasedWeight> ws =
      biased_weights({DType::Q5_0, DType::Q5_0, DType::Q8_0, DType::Q4_K, DType::Q6_K}, kCols, kRows, 30);
  std::vector<std::vector<float>> outputs;
  for (KernelChoice choice : {KernelChoice::Reference, KernelChoice::Fastest}) {
    auto be = make_cpu_backend(testing::cpu_options(2, choice));
    Graph g;
    Tensor* xt = g.input(DType::F32, {kCols, 1, 1, 1}, const_cast<float*>(x.data()));
    std::vector<Tensor*> products;  // consecutive nodes, as a layer's projections are
    for (auto& w : ws) {
      Tensor* wt = g.input(w.type, {kCols, kRows, 1, 1}, w.bytes.data());
      Tensor* bt = g.input(DType::F32, {kRows, 1, 1, 1}, w.bias.data());
      products.push_back(g.matmul(wt, xt, bt));
    }
    g.output = weighted_sum(g, products);
    ASSERT_TRUE(be->compute(g).ok());
    outputs.emplace_back(g.output->as<float>(), g.output->as<float>() + kRows);
  }
  for (int64_t r = 0; r < kRows; ++r) {
    const float want = outputs[0][static_cast<size_t>(r)];
    EXPECT_NEAR(outputs[1][static_cast<size_t>(r)], want, 1e-4 * (1.0 + std::fabs(want))) << "row " << r;
  }
}

// Few-token products of one input (a scheduler step, a verify pass) run as
// one group too. Each token's outputs must be bit for bit what a one-token
// pass gives it alone (batched and speculative greedy decoding rely on it),
// and within tolerance of the scalar reference backend.
TEST(MatMul, FewTokenProductsOfOneInputEqualTheirOneTokenPassesBitForBit) {
  constexpr int64_t kCols = 256, kRows = 45, kTokens = 5;
  const auto x = random_vec(static_cast<size_t>(kCols * kTokens), 22);
  std::vector<BiasedWeight> ws = biased_weights(
      {DType::Q5_0, DType::Q5_0, DType::Q4_0, DType::Q4_K, DType::Q6_K, DType::Q8_0}, kCols, kRows, 50);
  // The products of `tokens` input rows starting at token t0, combined with
  // different weights so that a product written to the wrong output shows.
  const auto run = [&](KernelChoice choice, int64_t t0, int64_t tokens) {
    auto be = make_cpu_backend(testing::cpu_options(2, choice));
    Graph g;
    Tensor* xt = g.input(DType::F32, {kCols, tokens, 1, 1}, const_cast<float*>(x.data() + t0 * kCols));
    Tensor* sum = nullptr;
    float weight = 1.0f;
    for (auto& w : ws) {
      Tensor* wt = g.input(w.type, {kCols, kRows, 1, 1}, w.bytes.data());
      Tensor* bt = g.input(DType::F32, {kRows, 1, 1, 1}, w.bias.data());
      Tensor* y = g.matmul(wt, xt, bt);
      sum = sum ? g.add(sum, g.scale(y, weight)) : y;
      weight *= 10.0f;
    }
    g.output = sum;
    EXPECT_TRUE(be->compute(g).ok());
    return std::vector<float>(g.output->as<float>(), g.output->as<float>() + kRows * tokens);
  };
  const std::vector<float> together = run(KernelChoice::Fastest, 0, kTokens);
  const std::vector<float> reference = run(KernelChoice::Reference, 0, kTokens);
  for (int64_t t = 0; t < kTokens; ++t) {
    const std::vector<float> alone = run(KernelChoice::Fastest, t, 1);
    for (int64_t r = 0; r < kRows; ++r) {
      const float got = together[static_cast<size_t>(t * kRows + r)];
      ASSERT_EQ(std::memcmp(&got, &alone[static_cast<size_t>(r)], sizeof(float)), 0)
          << "token " << t << " row " << r << ": " << got << " vs " << alone[static_cast<size_t>(r)];
      const float want = reference[static_cast<size_t>(t * kRows + r)];
      EXPECT_NEAR(got, want, 1e-4 * (1.0 + std::fabs(want))) << "token " << t << " row " << r;
    }
  }
}

// Prompt-sized products: Q, K and V of one input convert it once between
// them, and a SwiGLU read only by the down projection runs inside it. The
// graph built so that neither can happen (every product its own copy of the
// input, the SwiGLU's output passed through a scale by 1) must give the same
// bits, and both the scalar reference backend's values. A product of another
// input right after V must not take V's conversion.
TEST(MatMul, PromptProductsSharingAnInputAndAFusedSwiGluEqualTheUnfusedGraph) {
  constexpr int64_t kCols = 256, kRows = 45, kFfn = 512, kTokens = 40;
  const auto x = random_vec(static_cast<size_t>(kCols * kTokens), 70);
  const auto other = random_vec(static_cast<size_t>(kCols * kTokens), 60);
  const std::vector<BiasedWeight> attn =
      biased_weights({DType::Q5_0, DType::Q5_0, DType::Q8_0, DType::Q8_0}, kCols, kRows, 71);
  const std::vector<BiasedWeight> ffn = biased_weights({DType::Q4_K, DType::Q4_K}, kCols, kFfn, 80);
  const std::vector<BiasedWeight> down = biased_weights({DType::Q6_K}, kFfn, kRows, 90);
  const auto run = [&](KernelChoice choice, bool fusable) {
    auto be = make_cpu_backend(testing::cpu_options(2, choice));
    Graph g;
    // Unfused, each product reads its input through a scale by 1 of its
    // own: a node between any two products, which no conversion outlives.
    const auto input = [&](const std::vector<float>& values) {
      Tensor* t = g.input(DType::F32, {kCols, kTokens, 1, 1}, const_cast<float*>(values.data()));
      return fusable ? t : g.scale(t, 1.0f);
    };
    Tensor* shared = input(x);
    const auto weight = [&](const BiasedWeight& w, int64_t cols, int64_t rows) {
      return g.input(w.type, {cols, rows, 1, 1}, const_cast<uint8_t*>(w.bytes.data()));
    };
    std::vector<Tensor*> products;
    for (size_t i = 0; i < 3; ++i) products.push_back(g.matmul(weight(attn[i], kCols, kRows), fusable ? shared : input(x)));
    products.push_back(g.matmul(weight(attn[3], kCols, kRows), input(other)));
    Tensor* gate = g.matmul(weight(ffn[0], kCols, kFfn), fusable ? shared : input(x));
    Tensor* up = g.matmul(weight(ffn[1], kCols, kFfn), fusable ? shared : input(x));
    Tensor* act = g.swiglu(gate, up);
    products.push_back(g.matmul(weight(down[0], kFfn, kRows), fusable ? act : g.scale(act, 1.0f)));
    g.output = weighted_sum(g, products);
    EXPECT_TRUE(be->compute(g).ok());
    return std::vector<float>(g.output->as<float>(), g.output->as<float>() + kRows * kTokens);
  };
  const std::vector<float> fused = run(KernelChoice::Fastest, true);
  const std::vector<float> apart = run(KernelChoice::Fastest, false);
  const std::vector<float> reference = run(KernelChoice::Reference, false);
  for (size_t i = 0; i < fused.size(); ++i) {
    ASSERT_EQ(std::memcmp(&fused[i], &apart[i], sizeof(float)), 0)
        << "token " << i / kRows << " row " << i % kRows << ": " << fused[i] << " vs " << apart[i];
    EXPECT_NEAR(fused[i], reference[i], 2e-3 * (1.0 + std::fabs(reference[i]))) << "token " << i / kRows;
  }
}

// A few tokens' FFN (a scheduler step, a verify pass): the SwiGLU read only
// by the down projection runs inside that product's conversion. Each
// token's output must be bit for bit what a one-token pass gives it (which
// runs the SwiGLU as its own op), the same with the fusion prevented (a
// scale by 1 between), and within tolerance of the scalar reference.
TEST(MatMul, FewTokenSwiGluInsideTheDownProductGivesEachTokenItsOneTokenPass) {
  constexpr int64_t kCols = 256, kRows = 45, kFfn = 512, kTokens = 6;
  const auto x = random_vec(static_cast<size_t>(kCols * kTokens), 95);
  const std::vector<BiasedWeight> ffn = biased_weights({DType::Q5_0, DType::Q5_0}, kCols, kFfn, 96);
  const std::vector<BiasedWeight> downs = biased_weights({DType::Q4_K, DType::Q6_K}, kFfn, kRows, 97);
  const auto run = [&](KernelChoice choice, bool fusable, int64_t t0, int64_t tokens) {
    auto be = make_cpu_backend(testing::cpu_options(2, choice));
    Graph g;
    Tensor* xt = g.input(DType::F32, {kCols, tokens, 1, 1}, const_cast<float*>(x.data() + t0 * kCols));
    const auto weight = [&](const BiasedWeight& w, int64_t cols, int64_t rows) {
      return g.input(w.type, {cols, rows, 1, 1}, const_cast<uint8_t*>(w.bytes.data()));
    };
    std::vector<Tensor*> products;
    for (const BiasedWeight& down : downs) {
      Tensor* act = g.swiglu(g.matmul(weight(ffn[0], kCols, kFfn), xt), g.matmul(weight(ffn[1], kCols, kFfn), xt));
      products.push_back(g.matmul(weight(down, kFfn, kRows), fusable ? act : g.scale(act, 1.0f)));
    }
    g.output = weighted_sum(g, products);
    EXPECT_TRUE(be->compute(g).ok());
    return std::vector<float>(g.output->as<float>(), g.output->as<float>() + kRows * tokens);
  };
  const std::vector<float> fused = run(KernelChoice::Fastest, true, 0, kTokens);
  const std::vector<float> apart = run(KernelChoice::Fastest, false, 0, kTokens);
  const std::vector<float> reference = run(KernelChoice::Reference, false, 0, kTokens);
  for (int64_t t = 0; t < kTokens; ++t) {
    const std::vector<float> alone = run(KernelChoice::Fastest, true, t, 1);
    for (int64_t r = 0; r < kRows; ++r) {
      const auto i = static_cast<size_t>(t * kRows + r);
      ASSERT_EQ(std::memcmp(&fused[i], &alone[static_cast<size_t>(r)], sizeof(float)), 0)
          << "token " << t << " row " << r << ": " << fused[i] << " vs " << alone[static_cast<size_t>(r)];
      ASSERT_EQ(std::memcmp(&fused[i], &apart[i], sizeof(float)), 0) << "token " << t << " row " << r;
      EXPECT_NEAR(fused[i], reference[i], 2e-3 * (1.0 + std::fabs(reference[i]))) << "token " << t << " row " << r;
    }
  }
}

TEST(Backend, RefusesWhatItDoesNotSupportNamingTheTensor) {
  auto be = make_cpu_backend(testing::cpu_options(1));
  EXPECT_TRUE(be->supports(Op::MatMul, DType::Q4_K));
  EXPECT_FALSE(be->supports(Op::Attention, DType::Q4_0));
  std::vector<int32_t> ids{0};
  std::vector<uint8_t> data(64);
  Graph g;
  Tensor* w = g.input(DType::I64, {4, 2, 1, 1}, data.data());
  w->name = "token_embd.weight";
  g.output = g.get_rows(w, g.input(DType::I32, {1, 1, 1, 1}, ids.data()));
  auto st = be->compute(g);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message.find("'token_embd.weight'"), std::string::npos) << st.error().message;
}

}  // namespace
}  // namespace hearth::backend
