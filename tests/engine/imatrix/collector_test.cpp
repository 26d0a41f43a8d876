// Collected statistics against an independent computation: the input of the
// first layer's attention products is RMSNorm(token embedding) * attn_norm,
// which this test recomputes from the fixture's tensors for every token of
// every chunk. MoE expert stacks are checked against the routing arithmetic
// (each token reaches expert_used_count experts; gate and up see the same
// rows).
#include <gtest/gtest.h>
#include <hearth/engine/gguf/reader.h>
#include <hearth/engine/imatrix/collector.h>
#include <hearth/engine/quality/segments.h>
#include <hearth/engine/tokenizer/tokenizer.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "../model/fixture_logits.h"

namespace hearth::imatrix {
namespace {

using hearth::testing::data_path;

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<float> f32_tensor(const gguf::GgufFile& f, const std::string& name) {
  const auto* t = f.find_tensor(name);
  EXPECT_NE(t, nullptr) << name;
  if (!t) return {};
  EXPECT_EQ(t->type, DType::F32) << name;
  std::vector<float> v(static_cast<size_t>(t->elements()));
  std::memcpy(v.data(), f.tensor_data(*t).data(), v.size() * 4);
  return v;
}

TEST(ImportanceCollector, FirstAttentionInputMatchesRmsNormOfTheEmbeddings) {
  const auto path = data_path("models/tiny-llama-f32.gguf");
  auto model = model::Model::load(path);
  ASSERT_TRUE(model.ok()) << model.error().message;
  const std::string text = slurp(data_path("quality/story.txt"));
  CollectOptions options;
  options.n_ctx = 64;
  options.max_chunks = 3;
  options.threads = 1;
  auto m = collect_importance(**model, text, options);
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ(m->chunk_count, 3u);
  EXPECT_EQ(m->chunk_size, 64u);

  // The same chunks, the statistics recomputed in double from the file.
  auto file = gguf::GgufFile::open(path);
  ASSERT_TRUE(file.ok());
  auto tok = tokenizer::Tokenizer::from_gguf(*file);
  ASSERT_TRUE(tok.ok());
  auto chunks = quality::text_windows(quality::tokenize_text(*tok, text), 64);
  ASSERT_TRUE(chunks.ok());
  chunks->resize(3);
  const auto embd = f32_tensor(*file, "token_embd.weight");
  const auto norm = f32_tensor(*file, "blk.0.attn_norm.weight");
  const auto eps = file->get_float("llama.attention.layer_norm_rms_epsilon");
  ASSERT_TRUE(eps.ok());
  const size_t n_embd = norm.size();
  std::vector<double> expect(n_embd, 0.0);
  for (const auto& chunk : *chunks) {
    for (const int32_t t : chunk.tokens) {
      const float* x = embd.data() + static_cast<size_t>(t) * n_embd;
      double ss = 0;
      for (size_t c = 0; c < n_embd; ++c) ss += static_cast<double>(x[c]) * x[c];
      const double inv = 1.0 / std::sqrt(ss / static_cast<double>(n_embd) + *eps);
      for (size_t c = 0; c < n_embd; ++c) {
        const double y = x[c] * inv * norm[c];
        expect[c] += y * y;
      }
    }
  }
  for (const char* name : {"blk.0.attn_q.weight", "blk.0.attn_k.weight", "blk.0.attn_v.weight"}) {
    const auto it = m->entries.find(name);
    ASSERT_NE(it, m->entries.end()) << name;
    const auto& e = it->second;
    ASSERT_EQ(e.n_mat(), 1) << name;
    EXPECT_EQ(e.counts[0], 3 * 64) << name;
    ASSERT_EQ(e.sums.size(), n_embd) << name;
    for (size_t c = 0; c < n_embd; ++c) {
      EXPECT_NEAR(e.sums[c], expect[c], 1e-4 * expect[c] + 1e-9) << name << " column " << c;
    }
  }
  // Every weight product of every layer is there, each over every token.
  for (const auto& [name, e] : m->entries) {
    EXPECT_EQ(name.rfind("blk.", 0), 0u) << name;
    EXPECT_EQ(e.counts[0], 3 * 64) << name;
  }
  EXPECT_EQ(m->entries.size(), 2u * 7u);  // q, k, v, output, gate, up, down per layer
}

TEST(ImportanceCollector, ExpertStacksCountOnlyTheTokensRoutedToEachExpert) {
  const auto path = data_path("models/tiny-qwen3moe-f32.gguf");
  auto model = model::Model::load(path);
  ASSERT_TRUE(model.ok()) << model.error().message;
  CollectOptions options;
  options.n_ctx = 64;
  options.max_chunks = 2;
  options.threads = 1;
  auto m = collect_importance(**model, slurp(data_path("quality/story.txt")), options);
  ASSERT_TRUE(m.ok()) << m.error().message;
  auto file = gguf::GgufFile::open(path);
  ASSERT_TRUE(file.ok());
  const auto n_expert = *file->get_uint("qwen3moe.expert_count");
  const auto n_used = *file->get_uint("qwen3moe.expert_used_count");
  const double tokens = 2 * 64;
  for (const char* layer : {"blk.0.", "blk.1."}) {
    const auto& gate = m->entries.at(std::string(layer) + "ffn_gate_exps.weight");
    const auto& up = m->entries.at(std::string(layer) + "ffn_up_exps.weight");
    const auto& down = m->entries.at(std::string(layer) + "ffn_down_exps.weight");
    ASSERT_EQ(gate.n_mat(), static_cast<int64_t>(n_expert));
    double routed = 0;
    int used_experts = 0;
    for (int64_t e = 0; e < gate.n_mat(); ++e) {
      routed += gate.counts[static_cast<size_t>(e)];
      used_experts += gate.counts[static_cast<size_t>(e)] > 0;
      // Gate and up multiply the same routed rows; down its own rows, as many.
      EXPECT_EQ(up.counts[static_cast<size_t>(e)], gate.counts[static_cast<size_t>(e)]);
      EXPECT_EQ(down.counts[static_cast<size_t>(e)], gate.counts[static_cast<size_t>(e)]);
      for (int64_t c = 0; c < gate.cols(); ++c) {
        const auto i = static_cast<size_t>(e * gate.cols() + c);
        EXPECT_DOUBLE_EQ(up.sums[i], gate.sums[i]);
        if (gate.counts[static_cast<size_t>(e)] == 0) {
          EXPECT_EQ(gate.sums[i], 0.0);
        }
      }
    }
    EXPECT_EQ(routed, tokens * static_cast<double>(n_used)) << layer;
    EXPECT_GT(used_experts, 1) << layer;
    EXPECT_EQ(m->entries.at(std::string(layer) + "ffn_gate_inp.weight").counts[0], tokens) << layer;
  }
}

TEST(ImportanceCollector, TooShortATextIsAnError) {
  auto model = model::Model::load(data_path("models/tiny-llama-f32.gguf"));
  ASSERT_TRUE(model.ok());
  auto m = collect_importance(**model, "Once upon a time.", {});
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().code, ErrorCode::InvalidArgument);
  EXPECT_NE(m.error().message.find("tokens"), std::string::npos) << m.error().message;
}

}  // namespace
}  // namespace hearth::imatrix
