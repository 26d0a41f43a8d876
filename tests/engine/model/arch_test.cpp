// Architectures without fixtures (phi3, qwen3, gemma2, and llama with Llama
// 3.1 rope_freqs): small random-weight GGUF files written here, their logits
// checked against a naive scalar transformer written independently in this
// file (full score matrix and a plain softmax, no KV cache, no graph).
#include <gtest/gtest.h>
#include <hearth/engine/backend/activation_plan.h>
#include <hearth/engine/backend/cpu_backend.h>
#include <hearth/engine/gguf/writer.h>
#include <hearth/engine/kv/kv_pool.h>
#include <hearth/engine/model/model.h>

#include <cmath>
#include <cstring>
#include <map>
#include <numeric>
#include <random>

#include "weight_checks.h"

namespace hearth::model {
namespace {

enum class Family { Llama, Phi3, Qwen3, Gemma2 };

struct Spec {
  Family family;
  const char* arch;
  bool neox, fused, qk_norm, post_norms, gelu, tied, rope_freqs;
  int window;  // sliding window (0: none)
  float attn_cap, final_cap;
};

constexpr int E = 64, H = 4, HKV = 2, D = 16, F = 96, L = 2, V = 32;
constexpr float kEps = 1e-5f, kBase = 10000.0f;

using Mat = std::vector<float>;  // row-major {rows, cols}: GGUF dims {cols, rows}

struct Weights {
  std::map<std::string, Mat> t;
  const Mat& operator[](const std::string& k) const { return t.at(k); }
};

std::string blk(int l, const char* n) { return "blk." + std::to_string(l) + "." + n; }

Mat mv(const Mat& w, const std::vector<float>& x, int rows) {
  const int cols = static_cast<int>(x.size());
  Mat y(static_cast<size_t>(rows), 0.0f);
  for (int r = 0; r < rows; ++r) {
    double s = 0;
    for (int c = 0; c < cols; ++c) s += double(w[static_cast<size_t>(r * cols + c)]) * x[static_cast<size_t>(c)];
    y[static_cast<size_t>(r)] = static_cast<float>(s);
  }
  return y;
}

std::vector<float> rms(const std::vector<float>& x, const float* w, size_t off, size_t n) {
  std::vector<float> y(x);
  double ss = 0;
  for (size_t i = 0; i < n; ++i) ss += double(x[off + i]) * x[off + i];
  const double s = 1.0 / std::sqrt(ss / double(n) + kEps);
  for (size_t i = 0; i < n; ++i) y[off + i] = static_cast<float>(x[off + i] * s * w[i]);
  return y;
}

void rope(std::vector<float>& v, int heads, int pos, bool neox, const float* ff) {
  for (int h = 0; h < heads; ++h) {
    for (int i = 0; i < D / 2; ++i) {
      double theta = pos * std::pow(double(kBase), -2.0 * i / D);
      if (ff) theta /= ff[i];
      const int a = neox ? i : 2 * i, b = neox ? i + D / 2 : 2 * i + 1;
      float& x0 = v[static_cast<size_t>(h * D + a)];
      float& x1 = v[static_cast<size_t>(h * D + b)];
      const double c = std::cos(theta), s = std::sin(theta);
      const double y0 = x0 * c - x1 * s, y1 = x0 * s + x1 * c;
      x0 = static_cast<float>(y0);
      x1 = static_cast<float>(y1);
    }
  }
}

std::vector<float> naive_logits(const Spec& sp, const Weights& w, const std::vector<int32_t>& ids) {
  const int T = static_cast<int>(ids.size());
  std::vector<std::vector<float>> x(static_cast<size_t>(T));
  for (int t = 0; t < T; ++t) {
    const auto& emb = w["token_embd.weight"];
    x[t].assign(emb.begin() + ids[t] * E, emb.begin() + (ids[t] + 1) * E);
    if (sp.family == Family::Gemma2) for (auto& v : x[t]) v *= std::sqrt(float(E));
  }
  const float* ff = sp.rope_freqs ? w["rope_freqs.weight"].data() : nullptr;
  for (int l = 0; l < L; ++l) {
    std::vector<std::vector<float>> q(T), k(T), v(T);
    for (int t = 0; t < T; ++t) {
      auto h = rms(x[t], w[blk(l, "attn_norm.weight")].data(), 0, E);
      if (sp.fused) {
        auto qkv = mv(w[blk(l, "attn_qkv.weight")], h, H * D + 2 * HKV * D);
        q[t].assign(qkv.begin(), qkv.begin() + H * D);
        k[t].assign(qkv.begin() + H * D, qkv.begin() + H * D + HKV * D);
        v[t].assign(qkv.begin() + H * D + HKV * D, qkv.end());
      } else {
        q[t] = mv(w[blk(l, "attn_q.weight")], h, H * D);
        k[t] = mv(w[blk(l, "attn_k.weight")], h, HKV * D);
        v[t] = mv(w[blk(l, "attn_v.weight")], h, HKV * D);
      }
      if (sp.qk_norm) {
        for (int hh = 0; hh < H; ++hh) q[t] = rms(q[t], w[blk(l, "attn_q_norm.weight")].data(), size_t(hh * D), D);
        for (int hh = 0; hh < HKV; ++hh) k[t] = rms(k[t], w[blk(l, "attn_k_norm.weight")].data(), size_t(hh * D), D);
      }
      rope(q[t], H, t, sp.neox, ff);
      rope(k[t], HKV, t, sp.neox, ff);
    }
    const bool windowed = sp.window > 0 && (sp.family != Family::Gemma2 || l % 2 == 0);
    for (int t = 0; t < T; ++t) {
      std::vector<float> out(static_cast<size_t>(H * D), 0.0f);
      for (int hh = 0; hh < H; ++hh) {
        const int kh = hh / (H / HKV);
        std::vector<double> s;
        std::vector<int> js;
        for (int j = 0; j <= t; ++j) {
          if (windowed && t - j >= sp.window) continue;
          double d = 0;
          for (int i = 0; i < D; ++i) d += double(q[t][hh * D + i]) * k[j][kh * D + i];
          d /= std::sqrt(double(D));
          if (sp.attn_cap > 0) d = sp.attn_cap * std::tanh(d / sp.attn_cap);
          s.push_back(d);
          js.push_back(j);
        }
        const double mx = *std::max_element(s.begin(), s.end());
        double z = 0;
        for (auto& e : s) z += (e = std::exp(e - mx));
        for (size_t n = 0; n < s.size(); ++n) {
          for (int i = 0; i < D; ++i) out[hh * D + i] += static_cast<float>(s[n] / z * v[js[n]][kh * D + i]);
        }
      }
      auto a = mv(w[blk(l, "attn_output.weight")], out, E);
      if (sp.post_norms) a = rms(a, w[blk(l, "post_attention_norm.weight")].data(), 0, E);
      for (int i = 0; i < E; ++i) x[t][i] += a[i];
      auto h = rms(x[t], w[blk(l, "ffn_norm.weight")].data(), 0, E);
      std::vector<float> g, u;
      if (sp.fused) {
        auto gu = mv(w[blk(l, "ffn_up.weight")], h, 2 * F);
        g.assign(gu.begin(), gu.begin() + F);
        u.assign(gu.begin() + F, gu.end());
      } else {
        g = mv(w[blk(l, "ffn_gate.weight")], h, F);
        u = mv(w[blk(l, "ffn_up.weight")], h, F);
      }
      for (int i = 0; i < F; ++i) {
        const double gg = g[i];
        const double act = sp.gelu ? 0.5 * gg * (1 + std::tanh(std::sqrt(2 / M_PI) * (gg + 0.044715 * gg * gg * gg)))
                                   : gg / (1 + std::exp(-gg));
        g[i] = static_cast<float>(act * u[i]);
      }
      auto f = mv(w[blk(l, "ffn_down.weight")], g, E);
      if (sp.post_norms) f = rms(f, w[blk(l, "post_ffw_norm.weight")].data(), 0, E);
      for (int i = 0; i < E; ++i) x[t][i] += f[i];
    }
  }
  std::vector<float> logits;
  for (int t = 0; t < T; ++t) {
    auto h = rms(x[t], w["output_norm.weight"].data(), 0, E);
    auto y = mv(sp.tied ? w["token_embd.weight"] : w["output.weight"], h, V);
    if (sp.final_cap > 0) for (auto& e : y) e = sp.final_cap * std::tanh(e / sp.final_cap);
    logits.insert(logits.end(), y.begin(), y.end());
  }
  return logits;
}

// Writes the model; fills `w` with the values written.
std::string write_model(const Spec& sp, Weights& w) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> uni(-1.0f, 1.0f);
  std::vector<std::pair<gguf::TensorSpec, std::vector<uint8_t>>> tensors;
  auto add = [&](const std::string& name, int cols, int rows, float scale, float offset) {
    Mat m(static_cast<size_t>(cols * rows));
    for (auto& e : m) e = offset + scale * uni(rng);
    std::vector<uint8_t> bytes(m.size() * 4);
    std::memcpy(bytes.data(), m.data(), bytes.size());
    std::vector<int64_t> dims{cols};
    if (rows > 1) dims.push_back(rows);
    tensors.push_back({gguf::TensorSpec{name, DType::F32, dims}, std::move(bytes)});
    w.t[name] = std::move(m);
  };
  const float ws = 1.0f / std::sqrt(float(E));
  add("token_embd.weight", E, V, 1.0f, 0.0f);
  add("output_norm.weight", E, 1, 0.2f, 1.0f);
  if (!sp.tied) add("output.weight", E, V, ws, 0.0f);
  if (sp.rope_freqs) add("rope_freqs.weight", D / 2, 1, 0.5f, 2.0f);
  for (int l = 0; l < L; ++l) {
    add(blk(l, "attn_norm.weight"), E, 1, 0.2f, 1.0f);
    if (sp.fused) {
      add(blk(l, "attn_qkv.weight"), E, H * D + 2 * HKV * D, ws, 0.0f);
    } else {
      add(blk(l, "attn_q.weight"), E, H * D, ws, 0.0f);
      add(blk(l, "attn_k.weight"), E, HKV * D, ws, 0.0f);
      add(blk(l, "attn_v.weight"), E, HKV * D, ws, 0.0f);
    }
    if (sp.qk_norm) {
      add(blk(l, "attn_q_norm.weight"), D, 1, 0.2f, 1.0f);
      add(blk(l, "attn_k_norm.weight"), D, 1, 0.2f, 1.0f);
    }
    add(blk(l, "attn_output.weight"), H * D, E, ws, 0.0f);
    if (sp.post_norms) add(blk(l, "post_attention_norm.weight"), E, 1, 0.2f, 1.0f);
    add(blk(l, "ffn_norm.weight"), E, 1, 0.2f, 1.0f);
    if (sp.fused) {
      add(blk(l, "ffn_up.weight"), E, 2 * F, ws, 0.0f);
    } else {
      add(blk(l, "ffn_gate.weight"), E, F, ws, 0.0f);
      add(blk(l, "ffn_up.weight"), E, F, ws, 0.0f);
    }
    add(blk(l, "ffn_down.weight"), F, E, 1.0f / std::sqrt(float(F)), 0.0f);
    if (sp.post_norms) add(blk(l, "post_ffw_norm.weight"), E, 1, 0.2f, 1.0f);
  }
  const std::string a = sp.arch;
  std::vector<gguf::KeyValue> md = {
      {"general.architecture", gguf::make_string(a)},
      {a + ".context_length", gguf::make_uint32(64)},
      {a + ".embedding_length", gguf::make_uint32(E)},
      {a + ".block_count", gguf::make_uint32(L)},
      {a + ".feed_forward_length", gguf::make_uint32(F)},
      {a + ".attention.head_count", gguf::make_uint32(H)},
      {a + ".attention.head_count_kv", gguf::make_uint32(HKV)},
      {a + ".attention.layer_norm_rms_epsilon", gguf::make_float32(kEps)},
      {a + ".rope.freq_base", gguf::make_float32(kBase)},
  };
  if (sp.window > 0) md.push_back({a + ".attention.sliding_window", gguf::make_uint32(static_cast<uint32_t>(sp.window))});
  if (sp.attn_cap > 0) md.push_back({a + ".attn_logit_softcapping", gguf::make_float32(sp.attn_cap)});
  if (sp.final_cap > 0) md.push_back({a + ".final_logit_softcapping", gguf::make_float32(sp.final_cap)});
  const std::string path = ::testing::TempDir() + "hearth-arch-" + a + (sp.rope_freqs ? "-freqs" : "") + ".gguf";
  auto st = gguf::GgufWriter::write_file(path, md, tensors);
  EXPECT_TRUE(st.ok()) << (st.ok() ? "" : st.error().message);
  return path;
}

class Arch : public ::testing::TestWithParam<Spec> {};

// The family's random-weight model, written and loaded; `w` receives its
// weights. Null (with the failure recorded) when it does not load.
std::unique_ptr<Model> load_model(const Spec& sp, Weights& w) {
  auto model = Model::load(write_model(sp, w));
  EXPECT_TRUE(model.ok()) << (model.ok() ? "" : model.error().message);
  return model.ok() ? std::move(*model) : nullptr;
}

TEST_P(Arch, LogitsMatchANaiveScalarTransformer) {
  const Spec& sp = GetParam();
  Weights w;
  const std::string path = write_model(sp, w);
  auto model = Model::load(path);
  ASSERT_TRUE(model.ok()) << model.error().message;
  EXPECT_EQ((*model)->hparams().architecture, sp.arch);
  const std::vector<int32_t> ids{1, 5, 9, 30, 2, 17, 4};
  std::vector<int32_t> pos(ids.size());
  std::iota(pos.begin(), pos.end(), 0);
  auto be = backend::make_cpu_backend({2});
  auto cache = kv::KvCache::create(*be, (*model)->kv_config(64, DType::F32));
  ASSERT_TRUE(cache.ok());
  std::vector<float> got;
  auto st = (*model)->forward(*be, **cache, Batch{ids, pos}, LogitsRows::All, got);
  ASSERT_TRUE(st.ok()) << st.error().message;
  const auto want = naive_logits(sp, w, ids);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], 2e-3f * (1.0f + std::fabs(want[i]))) << i;
}

// Both weight placements for every family's tensors (fused projections and
// their views, Q/K norms, post-norms, tied output, Llama 3.1 rope_freqs):
// every weight's bytes are the file's, a copy leaves nothing (the RoPE
// frequency factors included) pointing into the mapping, and the logits
// match the naive transformer either way.
TEST_P(Arch, WeightsMappedOrCopiedGiveTheSameModel) {
  const Spec& sp = GetParam();
  Weights w;
  const std::string path = write_model(sp, w);
  const std::vector<int32_t> ids{3, 1, 4, 1, 5};
  std::vector<int32_t> pos(ids.size());
  std::iota(pos.begin(), pos.end(), 0);
  const auto want = naive_logits(sp, w, ids);
  for (WeightMemory where : {WeightMemory::Mapped, WeightMemory::HugePageCopy}) {
    LoadOptions opts;
    opts.weights = where;
    auto model = Model::load(path, opts);
    ASSERT_TRUE(model.ok()) << model.error().message;
    EXPECT_GT(hearth::testing::expect_weights_hold_the_files_bytes(**model, where), 0u);
    EXPECT_EQ((*model)->hparams().rope.freq_factors != nullptr, sp.rope_freqs);
    auto be = backend::make_cpu_backend({2});
    auto cache = kv::KvCache::create(*be, (*model)->kv_config(16, DType::F32));
    ASSERT_TRUE(cache.ok());
    std::vector<float> got;
    ASSERT_TRUE((*model)->forward(*be, **cache, Batch{ids, pos}, LogitsRows::All, got).ok());
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      ASSERT_NEAR(got[i], want[i], 2e-3f * (1.0f + std::fabs(want[i]))) << to_string(where) << " " << i;
    }
  }
}

// The last row's logits alone (a prompt before the first sampled token):
// past its K/V store the last layer computes that row only, and the logits
// still match the naive transformer's last row. Every product of the last
// layer but the K/V projections (one fused QKV product) reads a single row.
TEST_P(Arch, LastRowAloneMatchesTheNaiveTransformer) {
  const Spec& sp = GetParam();
  Weights w;
  const auto model = load_model(sp, w);
  ASSERT_TRUE(model);
  const std::vector<int32_t> ids{1, 5, 9, 30, 2, 17, 4};
  std::vector<int32_t> pos(ids.size());
  std::iota(pos.begin(), pos.end(), 0);
  auto be = backend::make_cpu_backend({2});
  auto cache = kv::KvCache::create(*be, model->kv_config(64, DType::F32));
  ASSERT_TRUE(cache.ok());

  backend::Graph graph;
  model->build_forward(graph, Batch{ids, pos}, **cache, LogitsRows::Last);
  int many_row_products = 0, one_row_products = 0;
  for (const backend::Node& n : graph.nodes()) {
    if (n.layer != L - 1 || n.op != backend::Op::MatMul) continue;
    (n.src[1]->ne[1] == static_cast<int64_t>(ids.size()) ? many_row_products : one_row_products) += 1;
  }
  EXPECT_EQ(many_row_products, sp.fused ? 1 : 2);
  EXPECT_EQ(one_row_products, sp.fused ? 3 : 5);  // Q (unless fused), output, gate and up (or fused), down

  std::vector<float> got;
  auto st = model->forward(*be, **cache, Batch{ids, pos}, LogitsRows::Last, got);
  ASSERT_TRUE(st.ok()) << st.error().message;
  const auto all = naive_logits(sp, w, ids);
  ASSERT_EQ(got.size(), static_cast<size_t>(V));
  const size_t last = all.size() - V;
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_NEAR(got[i], all[last + i], 2e-3f * (1.0f + std::fabs(all[last + i]))) << i;
  }
}

// Several sequences in one pass asking for their last rows only (a
// continuous-batching step with prompt chunks): each sequence's row matches
// the naive transformer's last row of that sequence, so the kept rows'
// queries read their own sequence's keys at their own positions.
TEST_P(Arch, KeptRowsOfSeveralSequencesMatchTheNaiveTransformer) {
  const Spec& sp = GetParam();
  Weights w;
  const auto model = load_model(sp, w);
  ASSERT_TRUE(model);
  const Model& m = *model;
  const std::vector<std::vector<int32_t>> texts{{1, 5, 9, 30, 2, 17, 4}, {8, 3, 22, 11, 6}, {13, 2, 27, 19}};
  auto be = backend::make_cpu_backend({2});
  auto pool = kv::KvPool::create(*be, kv::KvPoolConfig{L, HKV, D, DType::F32, 4, 32});
  ASSERT_TRUE(pool.ok()) << pool.error().message;
  // One block per sequence, the first block left unused so no table is the identity.
  ASSERT_TRUE((*pool)->allocate().ok());
  const int32_t tb = (*pool)->table_blocks();
  std::vector<int32_t> tables(texts.size() * static_cast<size_t>(tb), 0);
  std::vector<int32_t> ids, pos, seq, rows;
  for (size_t s = 0; s < texts.size(); ++s) {
    auto b = (*pool)->allocate();
    ASSERT_TRUE(b.ok());
    tables[s * static_cast<size_t>(tb)] = *b;
    for (size_t i = 0; i < texts[s].size(); ++i) {
      ids.push_back(texts[s][i]);
      pos.push_back(static_cast<int32_t>(i));
      seq.push_back(static_cast<int32_t>(s));
    }
    rows.push_back(static_cast<int32_t>(ids.size() - 1));
  }
  std::vector<float> got;
  auto st = m.forward_sequences(*be, **pool, SequenceBatch{ids, pos, seq, tables, rows}, got);
  ASSERT_TRUE(st.ok()) << st.error().message;
  ASSERT_EQ(got.size(), texts.size() * V);
  for (size_t s = 0; s < texts.size(); ++s) {
    const auto all = naive_logits(sp, w, texts[s]);
    const size_t last = all.size() - V;
    for (size_t i = 0; i < V; ++i) {
      const float want = all[last + i];
      ASSERT_NEAR(got[s * V + i], want, 2e-3f * (1.0f + std::fabs(want))) << "sequence " << s << " logit " << i;
    }
  }
}

// The scratch estimate holds for every family's layer shape (fused
// projections, Q/K norms, post-norms, soft-capped logits): after reserving
// kv::scratch_sizes, a full batch and decode steps run without the backend
// growing its scratch, and the activation plan of the batch needs exactly the
// estimated arena.
TEST_P(Arch, ScratchEstimateIsWhatTheCpuBackendUses) {
  const Spec& sp = GetParam();
  Weights w;
  const auto model = load_model(sp, w);
  ASSERT_TRUE(model);
  const Model& m = *model;
  EXPECT_EQ(m.memory_dims().projections, sp.fused ? kv::ProjectionLayout::Fused : kv::ProjectionLayout::Separate);
  constexpr int64_t kCtx = 64, kBatch = 16;
  auto sizes = kv::scratch_sizes(m.memory_dims(), kCtx, kBatch);
  ASSERT_TRUE(sizes.ok()) << sizes.error().message;
  auto be = backend::make_cpu_backend({1});
  ASSERT_TRUE(be->reserve_scratch({sizes->activation_bytes, sizes->matmul_bytes()}).ok());
  auto cache = kv::KvCache::create(*be, m.kv_config(kCtx, DType::F16));
  ASSERT_TRUE(cache.ok());
  std::vector<int32_t> ids(kBatch), pos(kBatch);
  for (int32_t i = 0; i < kBatch; ++i) ids[static_cast<size_t>(i)] = (i * 7 + 3) % V;
  std::iota(pos.begin(), pos.end(), 0);
  backend::Graph graph;
  m.build_forward(graph, Batch{ids, pos}, **cache, LogitsRows::Last);
  EXPECT_EQ(backend::plan_activations(graph).arena_bytes, sizes->activation_bytes);
  std::vector<float> logits;
  ASSERT_TRUE(m.forward(*be, **cache, Batch{ids, pos}, LogitsRows::Last, logits).ok());
  for (int32_t p = kBatch; p < kBatch + 4; ++p) {
    const int32_t id = p % V;
    ASSERT_TRUE(m.forward(*be, **cache, Batch{std::span(&id, 1), std::span(&p, 1)}, LogitsRows::Last, logits).ok());
  }
  const backend::MemoryUse use = be->memory_use();
  EXPECT_EQ(use.scratch_bytes, sizes->total());
  EXPECT_EQ(use.scratch_high_water_bytes, sizes->total());
  EXPECT_EQ(use.scratch_growths, 0u);
}

INSTANTIATE_TEST_SUITE_P(
    Families, Arch,
    ::testing::Values(
        Spec{Family::Llama, "llama", false, false, false, false, false, false, true, 0, 0, 0},
        Spec{Family::Phi3, "phi3", true, true, false, false, false, false, false, 3, 0, 0},
        Spec{Family::Qwen3, "qwen3", true, false, true, false, false, true, false, 0, 0, 0},
        Spec{Family::Gemma2, "gemma2", true, false, false, true, true, true, false, 4, 5.0f, 3.0f}),
    [](const ::testing::TestParamInfo<Spec>& param_info) {
      return std::string(param_info.param.arch) + (param_info.param.rope_freqs ? "_rope_freqs" : "");
    });

TEST(ArchRegistry, UnknownArchitectureIsRefusedNamingTheSupportedOnes) {
  const std::string path = ::testing::TempDir() + "hearth-arch-unknown.gguf";
  ASSERT_TRUE(gguf::GgufWriter::write_file(path, {{"general.architecture", gguf::make_string("mamba")}}, {}).ok());
  auto model = Model::load(path);
  ASSERT_FALSE(model.ok());
  EXPECT_NE(model.error().message.find("'mamba' is not supported"), std::string::npos) << model.error().message;
  EXPECT_NE(model.error().message.find("llama, qwen2, qwen3, phi3, gemma2"), std::string::npos);
}

TEST(ArchRegistry, AMissingTensorIsNamed) {
  Weights w;
  Spec sp{Family::Llama, "llama", false, false, false, false, false, false, false, 0, 0, 0};
  const std::string path = write_model(sp, w);
  // The same metadata with one tensor short: rewrite without ffn_down of layer 1.
  auto file = gguf::GgufFile::open(path);
  ASSERT_TRUE(file.ok());
  std::vector<std::pair<gguf::TensorSpec, std::vector<uint8_t>>> tensors;
  for (const auto& t : file->tensors()) {
    if (t.name == "blk.1.ffn_down.weight") continue;
    auto data = file->tensor_data(t);
    std::vector<int64_t> dims(t.dims.begin(), t.dims.begin() + t.n_dims);
    tensors.push_back({gguf::TensorSpec{t.name, t.type, dims}, std::vector<uint8_t>(data.begin(), data.end())});
  }
  const std::string broken = ::testing::TempDir() + "hearth-arch-missing.gguf";
  ASSERT_TRUE(gguf::GgufWriter::write_file(broken, file->metadata(), tensors).ok());
  auto model = Model::load(broken);
  ASSERT_FALSE(model.ok());
  EXPECT_NE(model.error().message.find("'blk.1.ffn_down.weight' is missing"), std::string::npos)
      << model.error().message;
}

TEST(Load, RefusesBeforeLoadingWhenMemoryIsShort) {
  EXPECT_TRUE(check_memory(1000, 2000, "m.gguf").ok());
  auto st = check_memory(5'100'000'000ull, 3'200'000'000ull, "m.gguf");
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, ErrorCode::OutOfMemory);
  EXPECT_EQ(st.error().message, "m.gguf needs 5.1 GB, 3.2 GB available");

  LoadOptions opts;
  opts.extra_bytes = 1ull << 60;  // more than any machine has
  auto model = Model::load(std::string(HEARTH_TEST_DATA_DIR) + "/models/stories260K.gguf", opts);
  ASSERT_FALSE(model.ok());
  EXPECT_NE(model.error().message.find("GB available"), std::string::npos) << model.error().message;
}

}  // namespace
}  // namespace hearth::model
