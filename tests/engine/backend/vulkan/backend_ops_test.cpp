// Op-by-op backend harness: every (Op, DType) the CPU backend supports runs
// as a one-node graph on random shapes (odd sizes included) on the CPU's
// fastest kernels and on Vulkan (lavapipe in CI), and is compared with the
// CPU backend's scalar reference kernels on the same data. One gtest case per
// (op, dtype, backend), so a failure names what failed; a pair Vulkan does
// not support is reported as skipped with the reason.
//
// Tolerances: the normalised mean squared error
//   nmse = sum((got - want)^2) / sum(want^2)
// must stay below a bound chosen per op and data type (kMaxNmse below):
//  - data movement (GetRows, SliceCols, LastRows, Add, Scale): 1e-12, as the
//    values are the same floats (dequantisation is exact in f32);
//  - F32 maths with exp/tanh/rsqrt (RmsNorm, SwiGlu, GeluGlu, SoftCap):
//    1e-9, a few ulp of library differences;
//  - Rope (plain, YaRN, Llama 3.1 frequency factors): 1e-7, sin/cos of
//    angles up to a few hundred radians;
//  - MatMul on F32: 1e-9; on F16/BF16: 1e-6 (the fast path may round the
//    activations to the weight's precision); on block-quantised weights:
//    5e-4, as the fast kernels quantise the activations to 8 bits the way
//    llama.cpp does (its test-backend-ops uses the same bound);
//  - KvStore: the cache rows read back and dequantised: 1e-12 for F32 and
//    F16 (one rounding, the same on every side), 1e-4 for Q8_0 (a value at a
//    rounding tie may land one quantum apart);
//  - Attention: 1e-6 for F32/F16 caches, 1e-4 for Q8_0 (the query may be
//    quantised to 8 bits for the dot products).
//  - TopK: exact (the chosen ids, compared as numbers); MoeGate: 1e-9 (exp);
//    MoeSum: 1e-12 (the same products and sums); MatMulId: as MatMul.
//  - gpt-oss: SwiGluOai 1e-9 (exp); AddId 1e-12 (one addition); half of
//    the Attention draws carry per-head sinks.
// KvStore writes no tensor; its graph also scales a one-element input so that
// the graph has an output, which the Vulkan backend reads back.
#include <gtest/gtest.h>
#include <hearth/engine/backend/cpu_backend.h>
#include <hearth/engine/backend/vulkan/vulkan_backend.h>
#include <hearth/engine/kv/kv_cache.h>
#include <hearth/engine/quant/interleave.h>
#include <hearth/engine/quant/reference.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <numeric>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "../test_kernel_level.h"
#include "vulkan_test_env.h"

namespace hearth::backend {
namespace {

// VulkanIntDot: the Vulkan backend with the integer-dot matvec path forced
// (products on 8-bit activations), for the products it changes.
enum class Target { CpuFast, Vulkan, VulkanIntDot };

struct OpCase {
  Op op;
  DType type;
  Target target;
};

constexpr DType kAllTypes[] = {DType::F32,  DType::F16,  DType::Q4_0, DType::Q4_1,   DType::Q5_0,   DType::Q5_1,
                               DType::Q8_0, DType::Q8_1, DType::Q2_K, DType::Q3_K,   DType::Q4_K,   DType::Q5_K,
                               DType::Q6_K, DType::Q8_K, DType::IQ4_NL, DType::IQ4_XS, DType::I8,   DType::I16,
                               DType::I32,  DType::I64,  DType::F64,  DType::BF16, DType::MXFP4};

// Every (op, dtype) the CPU backend says it supports, on both targets.
std::vector<OpCase> all_cases() {
  auto cpu = make_cpu_backend({1, KernelChoice::Reference});
  std::vector<OpCase> out;
  for (int o = 0; o < kOpCount; ++o) {
    for (DType t : kAllTypes) {
      if (!cpu->supports(static_cast<Op>(o), t)) continue;
      out.push_back({static_cast<Op>(o), t, Target::CpuFast});
      out.push_back({static_cast<Op>(o), t, Target::Vulkan});
      const auto op = static_cast<Op>(o);
      if ((op == Op::MatMul || op == Op::MatMulId) && vulkan::Kernels::supports_int_dot(t)) {
        out.push_back({op, t, Target::VulkanIntDot});
      }
    }
  }
  return out;
}

double max_nmse(Op op, DType type) {
  const bool blocks = traits(type).quantized;
  switch (op) {
    case Op::GetRows:
    case Op::SliceCols:
    case Op::LastRows:
    case Op::Add:
    case Op::Scale: return 1e-12;
    case Op::RmsNorm:
    case Op::SwiGlu:
    case Op::GeluGlu:
    case Op::SoftCap: return 1e-9;
    case Op::Rope: return 1e-7;
    case Op::MatMul: return type == DType::F32 ? 1e-9 : blocks ? 5e-4 : 1e-6;
    case Op::KvStore: return type == DType::Q8_0 ? 1e-4 : 1e-12;
    case Op::Attention: return type == DType::Q8_0 ? 1e-4 : 1e-6;
    case Op::TopK: return 0;
    case Op::MoeGate: return 1e-9;
    case Op::MoeSum: return 1e-12;
    case Op::MatMulId: return type == DType::F32 ? 1e-9 : blocks ? 5e-4 : 1e-6;
    case Op::SwiGluOai: return 1e-9;
    case Op::AddId: return 1e-12;
    case Op::LayerNorm:
    case Op::Gelu: return 1e-9;
  }
  return 0;
}

double nmse(const std::vector<float>& got, const std::vector<float>& want) {
  double err = 0, norm = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    const double d = double(got[i]) - double(want[i]);
    err += d * d;
    norm += double(want[i]) * want[i];
  }
  return norm > 0 ? err / norm : err;
}

std::vector<float> random_floats(std::mt19937& rng, size_t n, float scale = 1.0f) {
  std::uniform_real_distribution<float> d(-scale, scale);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

// One draw of shapes and data for a case; both backends build their graph
// from the same draw.
struct Draw {
  // Names the draw's weights: the Vulkan backend keeps uploaded weights by
  // host address, name and size, and a later draw's vector may reuse an
  // earlier one's address.
  std::string tag;
  int64_t cols = 0, rows = 0, tokens = 0;
  std::vector<float> a, b, bias;
  std::vector<uint8_t> weight;  // `rows` rows of `cols` elements of the case's type
  std::vector<int32_t> ids;
  float scalar = 1.0f;
  int64_t offset = 0, width = 0, last = 0, group = 0;
  RopeParams rope;
  std::vector<float> freq_factors;  // Llama 3.1 rope_freqs when not empty (bound in run())
  // Mixture of experts: experts, chosen per token, x one row per slot.
  int64_t n_expert = 0, k = 0;
  bool x_per_slot = false;
  MoeParams moe;
  // KV: heads, head size, positions stored and the queries' positions.
  int32_t n_head = 0, n_head_kv = 0, head_dim = 0;
  std::vector<int32_t> positions, query_positions;
  std::vector<float> sinks;  // Attention: per-head sink logits when not empty
};

int64_t pick(std::mt19937& rng, std::initializer_list<int64_t> from) {
  std::uniform_int_distribution<size_t> d(0, from.size() - 1);
  return *(from.begin() + d(rng));
}

Draw make_draw(const OpCase& c, unsigned seed) {
  std::mt19937 rng(seed);
  Draw d;
  d.tag = "harness." + std::to_string(seed);
  const int64_t block = traits(c.type).block_elements;
  d.cols = block > 1 ? block * pick(rng, {1, 2, 3}) : pick(rng, {1, 7, 33, 64, 129});
  // The Vulkan shaders read MXFP4 rows two 17-byte blocks at a time.
  if (c.type == DType::MXFP4) d.cols = 64 * pick(rng, {1, 2, 3});
  d.rows = pick(rng, {1, 5, 17, 67});
  d.tokens = pick(rng, {1, 3, 8, 13});
  const auto n = static_cast<size_t>(d.cols * d.tokens);
  d.a = random_floats(rng, n);
  d.b = random_floats(rng, n);
  switch (c.op) {
    case Op::GetRows:
    case Op::MatMul: {
      const uint64_t rb = *row_bytes(c.type, d.cols);
      d.weight.resize(rb * static_cast<size_t>(d.rows));
      const auto values = random_floats(rng, static_cast<size_t>(d.cols * d.rows));
      for (int64_t r = 0; r < d.rows; ++r) {
        EXPECT_TRUE(quant::quantize_row(c.type, values.data() + r * d.cols, d.weight.data() + r * rb, d.cols).ok());
      }
      std::uniform_int_distribution<int32_t> id(0, static_cast<int32_t>(d.rows - 1));
      d.ids.resize(static_cast<size_t>(d.tokens));
      for (auto& i : d.ids) i = id(rng);
      if (rng() % 2) d.bias = random_floats(rng, static_cast<size_t>(d.rows));
      break;
    }
    case Op::RmsNorm:
      d.bias = random_floats(rng, static_cast<size_t>(d.cols));  // the norm's weight
      d.group = d.cols % 2 == 0 && rng() % 2 ? d.cols / 2 : 0;
      break;
    case Op::LayerNorm:
      d.bias = random_floats(rng, static_cast<size_t>(d.cols));  // the norm's weight (its bias: b's first row)
      for (auto& x : d.a) x = x * 3.0f + 5.0f;  // rows far from zero mean: the mean must come off first
      break;
    case Op::Gelu:
      for (auto& x : d.a) x *= 6.0f;
      break;
    case Op::Scale: d.scalar = std::uniform_real_distribution<float>(-4, 4)(rng); break;
    case Op::SoftCap:
      for (auto& x : d.a) x *= 60.0f;
      d.scalar = std::uniform_real_distribution<float>(5, 50)(rng);
      break;
    case Op::SwiGlu:
    case Op::GeluGlu:
      for (auto& x : d.a) x *= 8.0f;
      break;
    case Op::SwiGluOai:  // both sides of the limit (7) for gate and up
      for (auto& x : d.a) x *= 12.0f;
      for (auto& x : d.b) x *= 12.0f;
      break;
    case Op::SliceCols:
      d.offset = std::uniform_int_distribution<int64_t>(0, d.cols - 1)(rng);
      d.width = std::uniform_int_distribution<int64_t>(1, d.cols - d.offset)(rng);
      break;
    case Op::LastRows: d.last = std::uniform_int_distribution<int64_t>(1, d.tokens)(rng); break;
    case Op::Add: break;
    case Op::TopK:
    case Op::MoeGate:
    case Op::MoeSum:
    case Op::AddId:
    case Op::MatMulId: {
      d.n_expert = c.op == Op::MatMulId ? pick(rng, {3, 8}) : pick(rng, {4, 8, 33, 128});
      d.k = std::uniform_int_distribution<int64_t>(1, std::min<int64_t>(d.n_expert, 8))(rng);
      // Each token's k distinct experts, in a random order.
      std::vector<int32_t> all(static_cast<size_t>(d.n_expert));
      d.ids.clear();
      for (int64_t t = 0; t < d.tokens; ++t) {
        std::iota(all.begin(), all.end(), 0);
        std::shuffle(all.begin(), all.end(), rng);
        d.ids.insert(d.ids.end(), all.begin(), all.begin() + d.k);
      }
      if (c.op == Op::TopK || c.op == Op::MoeGate) {
        d.a = random_floats(rng, static_cast<size_t>(d.n_expert * d.tokens), 4.0f);  // router logits
        d.moe.gating = rng() % 2 ? MoeGating::Softmax : MoeGating::SoftmaxSelected;
        d.moe.normalize = rng() % 2 != 0;
        d.moe.scale = rng() % 2 ? 1.0f : 2.5f;
      } else if (c.op == Op::MoeSum) {
        d.a = random_floats(rng, static_cast<size_t>(d.cols * d.k * d.tokens));
        d.b = random_floats(rng, static_cast<size_t>(d.k * d.tokens));
      } else if (c.op == Op::AddId) {
        d.a = random_floats(rng, static_cast<size_t>(d.cols * d.k * d.tokens));
        d.bias = random_floats(rng, static_cast<size_t>(d.cols * d.n_expert));  // the experts' biases
      } else {
        const uint64_t rb = *row_bytes(c.type, d.cols);
        d.weight.resize(rb * static_cast<size_t>(d.rows * d.n_expert));
        const auto values = random_floats(rng, static_cast<size_t>(d.cols * d.rows * d.n_expert));
        for (int64_t r = 0; r < d.rows * d.n_expert; ++r) {
          EXPECT_TRUE(quant::quantize_row(c.type, values.data() + r * d.cols, d.weight.data() + r * rb, d.cols).ok());
        }
        d.x_per_slot = rng() % 2 != 0;
        d.a = random_floats(rng, static_cast<size_t>(d.cols * d.tokens * (d.x_per_slot ? d.k : 1)));
      }
      break;
    }
    case Op::Rope: {
      d.head_dim = static_cast<int32_t>(pick(rng, {32, 64}));
      d.n_head = static_cast<int32_t>(pick(rng, {1, 3, 5}));
      d.cols = int64_t{d.head_dim} * d.n_head;
      d.a = random_floats(rng, static_cast<size_t>(d.cols * d.tokens));
      d.rope.mode = rng() % 2 ? RopeMode::NeoX : RopeMode::Normal;
      d.rope.head_dim = d.head_dim;
      d.rope.n_dims = rng() % 2 ? d.head_dim : d.head_dim / 2;
      d.rope.freq_base = 10000.0f;
      // The four draws (seed % 4): plain, YaRN (gpt-oss: factor 32 over 4096
      // positions), Llama 3.1 frequency factors, both.
      const unsigned variant = seed % 4;
      if (variant == 1 || variant == 3) {
        d.rope.freq_scale = 1.0f / 32.0f;
        d.rope.ext_factor = 1.0f;
        d.rope.n_ctx_orig = 4096;
        d.rope.attn_factor = std::uniform_real_distribution<float>(0.5f, 1.0f)(rng);
      }
      if (variant >= 2) {
        d.freq_factors.resize(static_cast<size_t>(d.rope.n_dims / 2));
        for (auto& f : d.freq_factors) f = std::uniform_real_distribution<float>(1.0f, 8.0f)(rng);
      }
      d.positions.resize(static_cast<size_t>(d.tokens));
      std::uniform_int_distribution<int32_t> p(0, 500);
      for (auto& x : d.positions) x = p(rng);
      break;
    }
    case Op::KvStore:
    case Op::Attention: {
      d.head_dim = static_cast<int32_t>(pick(rng, {32, 64}));
      d.n_head_kv = static_cast<int32_t>(pick(rng, {1, 2}));
      d.n_head = d.n_head_kv * static_cast<int32_t>(pick(rng, {1, 3}));
      const int32_t stored = static_cast<int32_t>(pick(rng, {5, 19, 41}));
      d.positions.resize(static_cast<size_t>(stored));
      std::iota(d.positions.begin(), d.positions.end(), 0);
      const int32_t queries = std::min<int32_t>(stored, static_cast<int32_t>(pick(rng, {1, 4, 7})));
      d.query_positions.assign(d.positions.end() - queries, d.positions.end());
      const auto kv = static_cast<size_t>(stored) * d.n_head_kv * d.head_dim;
      d.a = random_floats(rng, kv);                                                         // K
      d.b = random_floats(rng, kv);                                                         // V
      d.bias = random_floats(rng, static_cast<size_t>(queries) * d.n_head * d.head_dim);  // Q
      if (seed % 2 == 1) d.sinks = random_floats(rng, static_cast<size_t>(d.n_head), 4.0f);
      break;
    }
  }
  return d;
}

// Runs the case's graph on `be`; returns what it computed (for KvStore, the
// cache's K and V rows, dequantised).
std::vector<float> run(Backend& be, const OpCase& c, Draw d) {
  std::unique_ptr<kv::KvCache> cache;  // outlives the graph that reads it
  Graph g;
  auto in = [&](std::vector<float>& v, int64_t cols, int64_t rows) {
    return g.input(DType::F32, {cols, rows, 1, 1}, v.data());
  };
  if (c.op == Op::KvStore || c.op == Op::Attention) {
    const auto stored = static_cast<int64_t>(d.positions.size());
    auto created = kv::KvCache::create(be, kv::KvCacheConfig{1, d.n_head_kv, d.head_dim, stored, c.type});
    EXPECT_TRUE(created.ok()) << created.error().message;
    if (!created.ok()) return {};
    cache = std::move(created).value();
    const KvView view = cache->layer_view(0);
    const int64_t kv_width = int64_t{d.n_head_kv} * d.head_dim;
    {
      Graph s;
      Tensor* kt = s.input(DType::F32, {kv_width, stored, 1, 1}, d.a.data());
      Tensor* vt = s.input(DType::F32, {kv_width, stored, 1, 1}, d.b.data());
      Tensor* ps = s.input(DType::I32, {stored, 1, 1, 1}, d.positions.data());
      s.kv_store(kt, vt, ps, view);
      float one = 1.0f;
      s.output = s.scale(s.input(DType::F32, {1, 1, 1, 1}, &one), 1.0f);
      const auto st = be.compute(s);
      EXPECT_TRUE(st.ok()) << st.error().message;
      if (!st.ok()) return {};
    }
    if (c.op == Op::KvStore) {
      // The cache memory as the backend left it (host-visible on the CPU and
      // on unified-memory devices such as lavapipe).
      if (view.k == nullptr) {
        ADD_FAILURE() << "the " << be.name() << " KV cache is not host-visible; KvStore cannot be read back";
        return {};
      }
      // The rows of the stored positions only: the rest of the cache (the
      // last block's unused rows) was never written.
      std::vector<float> out(static_cast<size_t>(2 * stored * d.n_head_kv * d.head_dim));
      float* o = out.data();
      for (const uint8_t* base : {view.k, view.v}) {
        for (const int32_t pos : d.positions) {
          const int32_t block = view.block_table[pos / view.block_tokens];
          for (int32_t h = 0; h < d.n_head_kv; ++h) {
            const size_t row =
                (static_cast<size_t>(block) * view.n_head_kv + h) * view.block_tokens + pos % view.block_tokens;
            EXPECT_TRUE(quant::dequantize_row(c.type, base + row * view.row_bytes, o, d.head_dim).ok());
            o += d.head_dim;
          }
        }
      }
      return out;
    }
    const auto queries = static_cast<int64_t>(d.query_positions.size());
    Tensor* qt = g.input(DType::F32, {int64_t{d.n_head} * d.head_dim, queries, 1, 1}, d.bias.data());
    Tensor* ps = g.input(DType::I32, {queries, 1, 1, 1}, d.query_positions.data());
    const float scale = 1.0f / std::sqrt(static_cast<float>(d.head_dim));
    Tensor* sinks = nullptr;
    if (!d.sinks.empty()) {
      sinks = g.input(DType::F32, {d.n_head, 1, 1, 1}, d.sinks.data());
      sinks->kind = TensorKind::Weight;
      sinks->name = d.tag + ".sinks";
    }
    g.output = g.attention(qt, ps, view, AttentionParams{d.n_head, d.n_head_kv, d.head_dim, scale, 0.0f, 0}, sinks);
  } else {
    switch (c.op) {
      case Op::GetRows:
      case Op::MatMul: {
        Tensor* w = g.input(c.type, {d.cols, d.rows, 1, 1}, d.weight.data());
        w->kind = TensorKind::Weight;
        w->name = d.tag + ".weight";
        if (c.op == Op::GetRows) {
          g.output = g.get_rows(w, g.input(DType::I32, {d.tokens, 1, 1, 1}, d.ids.data()));
        } else {
          Tensor* bias = d.bias.empty() ? nullptr : in(d.bias, d.rows, 1);
          if (bias) {
            bias->kind = TensorKind::Weight;
            bias->name = d.tag + ".bias";
          }
          g.output = g.matmul(w, in(d.a, d.cols, d.tokens), bias);
        }
        break;
      }
      case Op::RmsNorm: {
        Tensor* w = in(d.bias, d.cols, 1);
        w->kind = TensorKind::Weight;
        w->name = d.tag + ".norm";
        g.output = g.rms_norm(in(d.a, d.cols, d.tokens), w, 1e-5f, d.group);
        break;
      }
      case Op::LayerNorm: {
        Tensor* w = in(d.bias, d.cols, 1);
        w->kind = TensorKind::Weight;
        w->name = d.tag + ".norm";
        Tensor* b = in(d.b, d.cols, 1);
        b->kind = TensorKind::Weight;
        b->name = d.tag + ".norm_bias";
        g.output = g.layer_norm(in(d.a, d.cols, d.tokens), w, b, 1e-5f);
        break;
      }
      case Op::Gelu: g.output = g.gelu(in(d.a, d.cols, d.tokens)); break;
      case Op::Add: g.output = g.add(in(d.a, d.cols, d.tokens), in(d.b, d.cols, d.tokens)); break;
      case Op::Scale: g.output = g.scale(in(d.a, d.cols, d.tokens), d.scalar); break;
      case Op::Rope: {
        RopeParams rope = d.rope;
        if (!d.freq_factors.empty()) rope.freq_factors = d.freq_factors.data();
        g.output = g.rope(in(d.a, d.cols, d.tokens), g.input(DType::I32, {d.tokens, 1, 1, 1}, d.positions.data()),
                          rope);
        break;
      }
      case Op::SwiGlu: g.output = g.swiglu(in(d.a, d.cols, d.tokens), in(d.b, d.cols, d.tokens)); break;
      case Op::GeluGlu: g.output = g.geglu(in(d.a, d.cols, d.tokens), in(d.b, d.cols, d.tokens)); break;
      case Op::SoftCap: g.output = g.softcap(in(d.a, d.cols, d.tokens), d.scalar); break;
      case Op::SliceCols: g.output = g.slice_cols(in(d.a, d.cols, d.tokens), d.offset, d.width); break;
      case Op::LastRows: g.output = g.last_rows(in(d.a, d.cols, d.tokens), d.last); break;
      case Op::TopK: g.output = g.top_k(in(d.a, d.n_expert, d.tokens), d.k); break;
      case Op::MoeGate:
        g.output = g.moe_gate(in(d.a, d.n_expert, d.tokens), g.input(DType::I32, {d.k, d.tokens, 1, 1}, d.ids.data()),
                              d.moe);
        break;
      case Op::MoeSum: g.output = g.moe_sum(in(d.a, d.cols, d.k * d.tokens), in(d.b, d.k, d.tokens)); break;
      case Op::SwiGluOai:
        g.output = g.swiglu_oai(in(d.a, d.cols, d.tokens), in(d.b, d.cols, d.tokens), GluParams{1.702f, 7.0f});
        break;
      case Op::AddId: {
        Tensor* bias = in(d.bias, d.cols, d.n_expert);
        bias->kind = TensorKind::Weight;
        bias->name = d.tag + ".expert_bias";
        g.output = g.add_id(in(d.a, d.cols, d.k * d.tokens), bias, g.input(DType::I32, {d.k, d.tokens, 1, 1}, d.ids.data()));
        break;
      }
      case Op::MatMulId: {
        Tensor* w = g.input(c.type, {d.cols, d.rows, d.n_expert, 1}, d.weight.data());
        w->kind = TensorKind::Weight;
        w->name = d.tag + ".experts";
        g.output = g.matmul_id(w, in(d.a, d.cols, d.tokens * (d.x_per_slot ? d.k : 1)),
                               g.input(DType::I32, {d.k, d.tokens, 1, 1}, d.ids.data()));
        break;
      }
      case Op::KvStore:
      case Op::Attention: break;
    }
  }
  const auto st = be.compute(g);
  EXPECT_TRUE(st.ok()) << st.error().message;
  if (!st.ok()) return {};
  if (g.output->type == DType::I32) {  // TopK's ids, compared as numbers
    const int32_t* ids = g.output->as<const int32_t>();
    return std::vector<float>(ids, ids + g.output->elements());
  }
  const float* y = g.output->as<const float>();
  return {y, y + g.output->elements()};
}

std::string case_name(const OpCase& c) {
  return std::string(to_string(c.op)) + "_" + std::string(traits(c.type).name) + "_" +
         (c.target == Target::Vulkan ? "vulkan" : c.target == Target::VulkanIntDot ? "vulkan_intdot" : "cpu");
}

// gtest prints the parameter in test listings (and so in ctest's names).
void PrintTo(const OpCase& c, std::ostream* os) { *os << case_name(c); }

class BackendOps : public ::testing::TestWithParam<OpCase> {
 protected:
  static void SetUpTestSuite() {
    for (const auto path : {vulkan::MatvecPath::Auto, vulkan::MatvecPath::IntegerDot}) {
      vulkan::VulkanConfig config = vulkan::testing::test_config();
      config.matvec_path = path;
      auto vk = vulkan::VulkanBackend::create(config);
      auto& slot = path == vulkan::MatvecPath::Auto ? vulkan_ : vulkan_int_dot_;
      if (vk.ok()) {
        slot = std::move(vk).value();
      } else {
        vulkan_error_ = vk.error().message;
      }
    }
  }
  static void TearDownTestSuite() {
    vulkan_.reset();
    vulkan_int_dot_.reset();
  }

  static std::unique_ptr<vulkan::VulkanBackend> vulkan_, vulkan_int_dot_;
  static std::string vulkan_error_;
};
std::unique_ptr<vulkan::VulkanBackend> BackendOps::vulkan_;
std::unique_ptr<vulkan::VulkanBackend> BackendOps::vulkan_int_dot_;
std::string BackendOps::vulkan_error_;

TEST_P(BackendOps, MatchesTheScalarReference) {
  const OpCase c = GetParam();
  auto reference = make_cpu_backend({1, KernelChoice::Reference});
  std::unique_ptr<Backend> fast;
  Backend* be = nullptr;
  if (c.target == Target::Vulkan) {
    // Fails (never skips) when no Vulkan device opens, as the other Vulkan tests.
    ASSERT_TRUE(vulkan_) << vulkan_error_;
    be = vulkan_.get();
  } else if (c.target == Target::VulkanIntDot) {
    ASSERT_TRUE(vulkan_int_dot_) << vulkan_error_;
    be = vulkan_int_dot_.get();
  } else {
    fast = make_cpu_backend(testing::cpu_options(2));
    be = fast.get();
  }
  if (!be->supports(c.op, c.type)) {
    // The pairs the CPU runs and Vulkan does not are known and stated here, so
    // a new gap fails: Q8_K is the CPU kernels' activation format (no model
    // stores weights in it), and the Vulkan KV cache is F16 or Q8_0.
    const bool known_gap =
        c.target != Target::CpuFast &&
        (c.type == DType::Q8_K || ((c.op == Op::KvStore || c.op == Op::Attention) && c.type == DType::F32));
    EXPECT_TRUE(known_gap) << be->name() << " does not run " << to_string(c.op) << " on " << traits(c.type).name;
    return;
  }
  const double bound = max_nmse(c.op, c.type);
  for (unsigned draw = 0; draw < 4; ++draw) {
    const unsigned seed = 1000u * static_cast<unsigned>(c.op) + 10u * static_cast<unsigned>(c.type) + draw;
    const Draw d = make_draw(c, seed);
    const std::vector<float> want = run(*reference, c, d);
    const std::vector<float> got = run(*be, c, d);
    ASSERT_FALSE(want.empty()) << "draw " << draw;
    ASSERT_EQ(got.size(), want.size()) << "draw " << draw;
    const double err = nmse(got, want);
    std::printf("[ op ] %-28s draw %u: cols %lld rows %lld tokens %lld nmse %.3g (bound %.0e)\n",
                case_name(c).c_str(), draw, static_cast<long long>(d.cols), static_cast<long long>(d.rows),
                static_cast<long long>(d.tokens), err, bound);
    EXPECT_LE(err, bound) << case_name(c) << " draw " << draw << ": cols " << d.cols << " rows " << d.rows
                          << " tokens " << d.tokens;
  }
}

// A stack of experts larger than one storage binding (gpt-oss-20b's 141 MB
// down projections; lavapipe binds at most 128 MiB): Vulkan binds a range of
// whole experts at a time, and every slot, whichever range its expert falls
// in, must equal the scalar reference.
TEST(BackendOpsLarge, MatMulIdOverAStackLargerThanOneBinding) {
  auto vk = vulkan::VulkanBackend::create(vulkan::testing::test_config());
  ASSERT_TRUE(vk.ok()) << vk.error().message;
  const int64_t cols = 2048, rows = 4608, n_expert = 4, k = 2, tokens = 3;  // 151 MB of F32
  std::mt19937 rng(77);
  std::vector<float> experts = random_floats(rng, static_cast<size_t>(cols * rows * n_expert), 0.05f);
  std::vector<float> x = random_floats(rng, static_cast<size_t>(cols * tokens));
  std::vector<int32_t> ids = {0, 3, 3, 1, 2, 0};  // the first and the last expert among them
  auto run_on = [&](Backend& be) {
    Graph g;
    Tensor* w = g.input(DType::F32, {cols, rows, n_expert, 1}, experts.data());
    w->kind = TensorKind::Weight;
    w->name = "large.experts";
    g.output = g.matmul_id(w, g.input(DType::F32, {cols, tokens, 1, 1}, x.data()),
                           g.input(DType::I32, {k, tokens, 1, 1}, ids.data()));
    const auto st = be.compute(g);
    EXPECT_TRUE(st.ok()) << st.error().message;
    if (!st.ok()) return std::vector<float>{};
    const float* y = g.output->as<const float>();
    return std::vector<float>(y, y + g.output->elements());
  };
  auto reference = make_cpu_backend({1, KernelChoice::Reference});
  const std::vector<float> want = run_on(*reference);
  const std::vector<float> got = run_on(**vk);
  ASSERT_EQ(got.size(), want.size());
  EXPECT_LE(nmse(got, want), 1e-9);
}

// A weight interleaved for the CPU's kernels (a model split between the GPU
// and the CPU loads that way) is converted to plain rows at upload: the
// products and lookups equal those of the plain weight bit for bit.
TEST(BackendOpsLayout, InterleavedWeightsGiveThePlainResults) {
  auto vk = vulkan::VulkanBackend::create(vulkan::testing::test_config());
  ASSERT_TRUE(vk.ok()) << vk.error().message;
  const int64_t cols = 96, rows = 48, tokens = 3;
  std::mt19937 rng(31);
  const std::vector<float> wf = random_floats(rng, static_cast<size_t>(cols * rows), 0.05f);
  std::vector<float> x = random_floats(rng, static_cast<size_t>(cols * tokens));
  const size_t rb = *row_bytes(DType::Q4_0, cols);
  std::vector<uint8_t> plain(rb * rows), interleaved(plain.size());
  for (int64_t r = 0; r < rows; ++r) {
    ASSERT_TRUE(quant::quantize_row(DType::Q4_0, wf.data() + r * cols, plain.data() + r * rb, cols).ok());
  }
  quant::interleave_rows(DType::Q4_0, plain.data(), interleaved.data(), rows, cols);
  std::vector<int32_t> ids = {5, 16, 47};
  auto run_on = [&](std::vector<uint8_t>& bytes, WeightLayout layout, bool lookup) {
    Graph g;
    Tensor* w = g.input(DType::Q4_0, {cols, rows, 1, 1}, bytes.data());
    w->kind = TensorKind::Weight;
    w->layout = layout;
    w->name = layout == WeightLayout::Plain ? "plain" : "interleaved";
    g.output = lookup ? g.get_rows(w, g.input(DType::I32, {tokens, 1, 1, 1}, ids.data()))
                      : g.matmul(w, g.input(DType::F32, {cols, tokens, 1, 1}, x.data()));
    const auto st = (*vk)->compute(g);
    EXPECT_TRUE(st.ok()) << st.error().message;
    if (!st.ok()) return std::vector<float>{};
    const float* y = g.output->as<const float>();
    return std::vector<float>(y, y + g.output->elements());
  };
  for (const bool lookup : {false, true}) {
    const auto want = run_on(plain, WeightLayout::Plain, lookup);
    const auto got = run_on(interleaved, WeightLayout::Interleaved16, lookup);
    ASSERT_FALSE(want.empty());
    EXPECT_EQ(got, want) << (lookup ? "get_rows" : "matmul");
  }
}

INSTANTIATE_TEST_SUITE_P(AllSupported, BackendOps, ::testing::ValuesIn(all_cases()),
                         [](const ::testing::TestParamInfo<OpCase>& p) { return case_name(p.param); });

}  // namespace
}  // namespace hearth::backend
