// nomic-bert (nomic-embed-text) has no reference-engine fixture here: a
// small random-weight nomic-bert file is written with the project's GGUF
// writer (the tiny BERT fixture's vocabulary and embedding tables, new
// fused QKV, SwiGLU and output matrices), and the embedder's vectors are
// compared with a direct double-precision computation of the architecture's
// definition: LayerNorm(token + type-0 embedding); per layer q, k, v from the
// fused product (in that order), NeoX RoPE (halves of each head) on q and
// k, bidirectional softmax attention, output projection, LayerNorm(x + attn),
// LayerNorm(h + down(silu(gate(h)) * up(h))); mean pooling; L2 norm.
#include <gtest/gtest.h>
#include <hearth/engine/backend/cpu_backend.h>
#include <hearth/engine/gguf/reader.h>
#include <hearth/engine/gguf/writer.h>
#include <hearth/engine/runtime/embedder.h>

#include <cmath>
#include <cstring>
#include <random>

#include "embed_fixture.h"

namespace hearth::runtime {
namespace {

constexpr int64_t kEmbd = 128, kHeads = 4, kHeadDim = 32, kFf = 96, kLayers = 2;
constexpr double kBase = 1000.0;

using Matrix = std::vector<float>;  // rows x cols, row-major: {cols, rows} in GGUF

struct Weights {
  Matrix tok, types, embd_norm, embd_norm_b;
  struct Layer {
    Matrix qkv, out, norm1, norm1_b, up, gate, down, norm2, norm2_b;
  };
  std::vector<Layer> layers;
};

Matrix random_matrix(std::mt19937& rng, int64_t n, float scale) {
  std::normal_distribution<float> d(0.0f, scale);
  Matrix m(static_cast<size_t>(n));
  for (auto& x : m) x = d(rng);
  return m;
}

Matrix tensor_floats(const gguf::GgufFile& f, const std::string& name) {
  const auto* t = f.find_tensor(name);
  EXPECT_TRUE(t && t->type == DType::F32) << name;
  const auto bytes = f.tensor_data(*t);
  Matrix m(bytes.size() / 4);
  std::memcpy(m.data(), bytes.data(), bytes.size());
  return m;
}

std::vector<uint8_t> as_bytes(const Matrix& m) {
  std::vector<uint8_t> b(m.size() * 4);
  std::memcpy(b.data(), m.data(), b.size());
  return b;
}

// Writes the model; fills `w` with what was written.
std::string write_model(Weights& w) {
  auto bert = gguf::GgufFile::open(hearth::testing::embed_path("tiny-bert-f32.gguf"));
  EXPECT_TRUE(bert.ok());
  std::vector<gguf::KeyValue> meta;
  for (const auto& kv : bert->metadata()) {
    if (kv.key.rfind("tokenizer.", 0) == 0) meta.push_back(kv);
  }
  meta.push_back({"general.architecture", gguf::make_string("nomic-bert")});
  meta.push_back({"nomic-bert.context_length", gguf::make_uint32(128)});
  meta.push_back({"nomic-bert.embedding_length", gguf::make_uint32(kEmbd)});
  meta.push_back({"nomic-bert.feed_forward_length", gguf::make_uint32(kFf)});
  meta.push_back({"nomic-bert.block_count", gguf::make_uint32(kLayers)});
  meta.push_back({"nomic-bert.attention.head_count", gguf::make_uint32(kHeads)});
  meta.push_back({"nomic-bert.attention.layer_norm_epsilon", gguf::make_float32(1e-12f)});
  meta.push_back({"nomic-bert.attention.causal", gguf::make_bool(false)});
  meta.push_back({"nomic-bert.pooling_type", gguf::make_uint32(1)});
  meta.push_back({"nomic-bert.rope.freq_base", gguf::make_float32(static_cast<float>(kBase))});
  w.tok = tensor_floats(*bert, "token_embd.weight");
  w.types = tensor_floats(*bert, "token_types.weight");
  w.embd_norm = tensor_floats(*bert, "token_embd_norm.weight");
  w.embd_norm_b = tensor_floats(*bert, "token_embd_norm.bias");
  const int64_t n_vocab = static_cast<int64_t>(w.tok.size()) / kEmbd;
  std::vector<std::pair<gguf::TensorSpec, std::vector<uint8_t>>> tensors;
  auto add = [&](const std::string& name, const Matrix& m, std::vector<int64_t> dims) {
    tensors.push_back({gguf::TensorSpec{name, DType::F32, std::move(dims)}, as_bytes(m)});
  };
  add("token_embd.weight", w.tok, {kEmbd, n_vocab});
  add("token_types.weight", w.types, {kEmbd, 2});
  add("token_embd_norm.weight", w.embd_norm, {kEmbd});
  add("token_embd_norm.bias", w.embd_norm_b, {kEmbd});
  std::mt19937 rng(7);
  for (int64_t l = 0; l < kLayers; ++l) {
    Weights::Layer L;
    const float s = 1.0f / std::sqrt(static_cast<float>(kEmbd));
    L.qkv = random_matrix(rng, 3 * kEmbd * kEmbd, 2.0f * s);
    L.out = random_matrix(rng, kEmbd * kEmbd, s);
    L.up = random_matrix(rng, kFf * kEmbd, s);
    L.gate = random_matrix(rng, kFf * kEmbd, s);
    L.down = random_matrix(rng, kEmbd * kFf, 1.0f / std::sqrt(static_cast<float>(kFf)));
    L.norm1 = random_matrix(rng, kEmbd, 0.2f);
    L.norm2 = random_matrix(rng, kEmbd, 0.2f);
    for (auto& x : L.norm1) x += 1.0f;
    for (auto& x : L.norm2) x += 1.0f;
    L.norm1_b = random_matrix(rng, kEmbd, 0.1f);
    L.norm2_b = random_matrix(rng, kEmbd, 0.1f);
    const std::string p = "blk." + std::to_string(l) + ".";
    add(p + "attn_qkv.weight", L.qkv, {kEmbd, 3 * kEmbd});
    add(p + "attn_output.weight", L.out, {kEmbd, kEmbd});
    add(p + "attn_output_norm.weight", L.norm1, {kEmbd});
    add(p + "attn_output_norm.bias", L.norm1_b, {kEmbd});
    add(p + "ffn_up.weight", L.up, {kEmbd, kFf});
    add(p + "ffn_gate.weight", L.gate, {kEmbd, kFf});
    add(p + "ffn_down.weight", L.down, {kFf, kEmbd});
    add(p + "layer_output_norm.weight", L.norm2, {kEmbd});
    add(p + "layer_output_norm.bias", L.norm2_b, {kEmbd});
    w.layers.push_back(std::move(L));
  }
  const std::string path = ::testing::TempDir() + "tiny-nomic-bert.gguf";
  const auto st = gguf::GgufWriter::write_file(path, meta, tensors);
  EXPECT_TRUE(st.ok()) << (st.ok() ? "" : st.error().message);
  return path;
}

using Rows = std::vector<std::vector<double>>;

std::vector<double> matvec(const Matrix& m, int64_t rows, int64_t cols, const std::vector<double>& x) {
  std::vector<double> y(static_cast<size_t>(rows), 0.0);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) y[static_cast<size_t>(r)] += m[static_cast<size_t>(r * cols + c)] * x[static_cast<size_t>(c)];
  }
  return y;
}

std::vector<double> layer_norm(const std::vector<double>& x, const Matrix& w, const Matrix& b) {
  double mean = 0, var = 0;
  for (double v : x) mean += v;
  mean /= static_cast<double>(x.size());
  for (double v : x) var += (v - mean) * (v - mean);
  var /= static_cast<double>(x.size());
  std::vector<double> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) y[i] = (x[i] - mean) / std::sqrt(var + 1e-12) * w[i] + b[i];
  return y;
}

// NeoX: dimension i of a head turns with dimension i + head_dim/2.
void rope_neox(std::vector<double>& v, int64_t pos) {
  for (int64_t h = 0; h < kHeads; ++h) {
    for (int64_t i = 0; i < kHeadDim / 2; ++i) {
      const double theta = static_cast<double>(pos) * std::pow(kBase, -2.0 * static_cast<double>(i) / kHeadDim);
      const auto a = static_cast<size_t>(h * kHeadDim + i), b = a + kHeadDim / 2;
      const double x0 = v[a], x1 = v[b];
      v[a] = x0 * std::cos(theta) - x1 * std::sin(theta);
      v[b] = x0 * std::sin(theta) + x1 * std::cos(theta);
    }
  }
}

std::vector<double> reference_embedding(const Weights& w, const std::vector<int32_t>& ids) {
  const auto n = static_cast<int64_t>(ids.size());
  Rows x;
  for (const int32_t id : ids) {
    std::vector<double> e(static_cast<size_t>(kEmbd));
    for (int64_t c = 0; c < kEmbd; ++c) e[static_cast<size_t>(c)] = w.tok[static_cast<size_t>(id * kEmbd + c)] + w.types[static_cast<size_t>(c)];
    x.push_back(layer_norm(e, w.embd_norm, w.embd_norm_b));
  }
  for (const auto& L : w.layers) {
    Rows q(static_cast<size_t>(n)), k(static_cast<size_t>(n)), v(static_cast<size_t>(n));
    for (int64_t t = 0; t < n; ++t) {
      const auto qkv = matvec(L.qkv, 3 * kEmbd, kEmbd, x[static_cast<size_t>(t)]);
      q[static_cast<size_t>(t)].assign(qkv.begin(), qkv.begin() + kEmbd);
      k[static_cast<size_t>(t)].assign(qkv.begin() + kEmbd, qkv.begin() + 2 * kEmbd);
      v[static_cast<size_t>(t)].assign(qkv.begin() + 2 * kEmbd, qkv.end());
      rope_neox(q[static_cast<size_t>(t)], t);
      rope_neox(k[static_cast<size_t>(t)], t);
    }
    Rows next;
    for (int64_t t = 0; t < n; ++t) {
      std::vector<double> attn(static_cast<size_t>(kEmbd), 0.0);
      for (int64_t h = 0; h < kHeads; ++h) {
        std::vector<double> s(static_cast<size_t>(n));
        double mx = -1e300, sum = 0;
        for (int64_t j = 0; j < n; ++j) {
          double d = 0;
          for (int64_t c = 0; c < kHeadDim; ++c) {
            d += q[static_cast<size_t>(t)][static_cast<size_t>(h * kHeadDim + c)] * k[static_cast<size_t>(j)][static_cast<size_t>(h * kHeadDim + c)];
          }
          s[static_cast<size_t>(j)] = d / std::sqrt(static_cast<double>(kHeadDim));
          mx = std::max(mx, s[static_cast<size_t>(j)]);
        }
        for (auto& e : s) sum += (e = std::exp(e - mx));
        for (int64_t j = 0; j < n; ++j) {
          for (int64_t c = 0; c < kHeadDim; ++c) {
            attn[static_cast<size_t>(h * kHeadDim + c)] += s[static_cast<size_t>(j)] / sum * v[static_cast<size_t>(j)][static_cast<size_t>(h * kHeadDim + c)];
          }
        }
      }
      const auto o = matvec(L.out, kEmbd, kEmbd, attn);
      std::vector<double> r(static_cast<size_t>(kEmbd));
      for (size_t c = 0; c < r.size(); ++c) r[c] = x[static_cast<size_t>(t)][c] + o[c];
      const auto h1 = layer_norm(r, L.norm1, L.norm1_b);
      const auto up = matvec(L.up, kFf, kEmbd, h1);
      const auto gate = matvec(L.gate, kFf, kEmbd, h1);
      std::vector<double> act(static_cast<size_t>(kFf));
      for (size_t i = 0; i < act.size(); ++i) act[i] = gate[i] / (1.0 + std::exp(-gate[i])) * up[i];
      const auto down = matvec(L.down, kEmbd, kFf, act);
      for (size_t c = 0; c < r.size(); ++c) r[c] = h1[c] + down[c];
      next.push_back(layer_norm(r, L.norm2, L.norm2_b));
    }
    x = std::move(next);
  }
  std::vector<double> pooled(static_cast<size_t>(kEmbd), 0.0), out;
  for (const auto& row : x) {
    for (size_t c = 0; c < pooled.size(); ++c) pooled[c] += row[c] / static_cast<double>(n);
  }
  double norm = 0;
  for (double p : pooled) norm += p * p;
  for (double p : pooled) out.push_back(p / std::sqrt(norm));
  return out;
}

TEST(NomicBert, EmbeddingsMatchTheArchitecturesDefinition) {
  Weights w;
  const std::string path = write_model(w);
  auto be = backend::make_cpu_backend({2});
  auto e = Embedder::load(path, *be);
  ASSERT_TRUE(e.ok()) << e.error().message;
  EXPECT_EQ((*e)->pooling(), model::Pooling::Mean);
  const auto texts = hearth::testing::read_embed_texts();
  auto got = (*e)->embed(texts);
  ASSERT_TRUE(got.ok()) << got.error().message;
  double worst = 1.0;
  for (size_t i = 0; i < texts.size(); ++i) {
    const auto want = reference_embedding(w, (*e)->tokenize(texts[i]));
    double dot = 0;
    for (size_t c = 0; c < want.size(); ++c) dot += want[c] * got->vectors[i][c];
    worst = std::min(worst, dot);
    EXPECT_GE(dot, 0.9999) << "text " << i;
  }
  std::printf("[embed] nomic-bert against its definition: worst cosine %.7f\n", worst);
  // nomic-embed-text's task prefixes.
  EmbedOptions query, document;
  query.role = TextRole::Query;
  document.role = TextRole::Document;
  EXPECT_EQ((*e)->prepare("a dog", query), "search_query: a dog");
  EXPECT_EQ((*e)->prepare("a dog", document), "search_document: a dog");
}

}  // namespace
}  // namespace hearth::runtime
