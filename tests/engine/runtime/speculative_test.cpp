// Speculative decoding on real models (CPU): greedy output is exactly the
// plain greedy output on the bundled story model (200 tokens) and on every
// fixture family (64 tokens), with n-gram and model drafts at several
// lengths; sampled output follows the target's distribution; incompatible
// draft models are refused with the reason.
#include <gtest/gtest.h>
#include <hearth/engine/backend/cpu_backend.h>
#include <hearth/engine/runtime/drafter.h>
#include <hearth/engine/tools/quantize_model.h>

#include <algorithm>
#include <cstring>
#include <cmath>
#include <filesystem>
#include <numeric>

#include "../model/fixture_logits.h"
#include "../sampling/chi_square.h"
#include "runtime_fixture.h"
#include "speculative_check.h"

namespace hearth::runtime {
namespace {

using hearth::testing::data_path;
using hearth::testing::read_ids;
using testing::expect_speculation_exact;

std::unique_ptr<model::Model> load(const std::string& path) {
  auto m = model::Model::load(path);
  EXPECT_TRUE(m.ok()) << path << ": " << (m.ok() ? "" : m.error().message);
  return m.ok() ? std::move(*m) : nullptr;
}

// The story model quantized to Q8_0 by the engine's own quantizer: a real
// second model with the same vocabulary, to draft for the F32 original.
class StoryDraft : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = std::filesystem::temp_directory_path() / ("hearth-spec-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    tools::QuantizeOptions q;
    q.target = tools::QuantTarget::Q8_0;
    q.error_report = tools::ErrorReport::Skip;
    auto r = tools::quantize_model(data_path("models/stories260K.gguf"), dir_ / "stories-q8_0.gguf", q);
    ASSERT_TRUE(r.ok()) << r.error().message;
  }
  static void TearDownTestSuite() { std::filesystem::remove_all(dir_); }
  void SetUp() override {
    target_ = load(data_path("models/stories260K.gguf"));
    draft_ = load((dir_ / "stories-q8_0.gguf").string());
    ASSERT_TRUE(target_ && draft_);
    backend_ = backend::make_cpu_backend({2});
    draft_backend_ = backend::make_cpu_backend({1});
  }
  static inline std::filesystem::path dir_;
  std::unique_ptr<model::Model> target_, draft_;
  std::unique_ptr<backend::Backend> backend_, draft_backend_;
};

TEST_F(StoryDraft, GreedyWithSpeculationIsPlainGreedyFor200Tokens) {
  const auto prompt = read_ids(data_path("models/stories260K.prompt-tokens.txt"));
  const auto f = expect_speculation_exact(*target_, *backend_, draft_.get(), draft_backend_.get(), prompt, 200,
                                          {1, 2, 4, 8});
  // Both outcomes of verification happened: drafts kept and drafts refused.
  EXPECT_GT(f.accepted, 0);
  EXPECT_LT(f.accepted, f.drafted);
  // And the first 100 tokens are the reference engine's greedy ids.
  const auto ref = read_ids(data_path("models/stories260K.gguf.greedy.txt"));
  SpeculationConfig c;
  c.draft_max = 4;
  Speculator spec(std::make_unique<NgramDrafter>(), c);
  const auto got = testing::greedy_tokens(*target_, *backend_, prompt, 100, &spec);
  EXPECT_EQ(got, std::vector<int32_t>(ref.begin(), ref.begin() + 100));
}

TEST_F(StoryDraft, AdaptiveSpeculationKeepsTheOutput) {
  const auto prompt = read_ids(data_path("models/stories260K.prompt-tokens.txt"));
  const auto plain = testing::greedy_tokens(*target_, *backend_, prompt, 120, nullptr);
  auto drafter = ModelDrafter::create(*target_, *draft_, *draft_backend_, 512);
  ASSERT_TRUE(drafter.ok()) << drafter.error().message;
  Speculator spec(std::move(*drafter), SpeculationConfig{});
  EXPECT_EQ(testing::greedy_tokens(*target_, *backend_, prompt, 120, &spec), plain);
  EXPECT_EQ(testing::greedy_tokens(*target_, *backend_, prompt, 120, &spec), plain) << "a second request";
}

// The target's distribution after `context` under the test's chain
// (temperature 1, top-k 6, nothing else), from plain logits.
std::vector<std::pair<int32_t, double>> top_k_softmax(std::span<const float> logits, size_t k) {
  std::vector<int32_t> ids(logits.size());
  std::iota(ids.begin(), ids.end(), 0);
  std::partial_sort(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(k), ids.end(),
                    [&](int32_t a, int32_t b) { return logits[static_cast<size_t>(a)] > logits[static_cast<size_t>(b)]; });
  std::vector<std::pair<int32_t, double>> p;
  double sum = 0;
  for (size_t i = 0; i < k; ++i) {
    const double e = std::exp(double(logits[static_cast<size_t>(ids[i])]) - double(logits[static_cast<size_t>(ids[0])]));
    p.emplace_back(ids[i], e);
    sum += e;
  }
  for (auto& x : p) x.second /= sum;
  return p;
}

// Samples 3 tokens after a prompt many times with speculation (k = 2, every
// step speculative) and checks the second token, conditioned on the most
// frequent first one, against the target's distribution: the first token is
// drawn plainly, the second always comes out of a verify pass.
void expect_sampled_distribution(const model::Model& target, backend::Backend& backend, Speculator& spec,
                                 const std::vector<int32_t>& prompt, const char* what) {
  constexpr size_t kTopK = 6;
  constexpr int kTrials = 3000;
  auto s = Session::create(target, backend, SessionConfig{256, DType::F32, 16});
  ASSERT_TRUE(s.ok());
  GenerateOptions opt;
  opt.max_tokens = 3;
  opt.sampler.temperature = 1.0f;
  opt.sampler.top_k = static_cast<int32_t>(kTopK);
  opt.sampler.top_p = 1.0f;
  opt.sampler.min_p = 0.0f;
  opt.speculator = &spec;
  std::vector<std::vector<int32_t>> outputs;
  for (int trial = 0; trial < kTrials; ++trial) {
    (*s)->reset();
    opt.sampler.seed = static_cast<uint64_t>(trial) + 1;
    auto r = (*s)->generate(prompt, opt, {}, {});
    ASSERT_TRUE(r.ok()) << r.error().message;
    if (r->tokens.size() >= 2) outputs.push_back(r->tokens);
  }
  std::vector<int64_t> first_counts(target.hparams().n_vocab, 0);
  for (const auto& o : outputs) ++first_counts[static_cast<size_t>(o[0])];
  const auto first = static_cast<int32_t>(std::max_element(first_counts.begin(), first_counts.end()) - first_counts.begin());

  auto ref = Session::create(target, backend, SessionConfig{256, DType::F32, 16});
  ASSERT_TRUE(ref.ok());
  auto ctx = prompt;
  ctx.push_back(first);
  ASSERT_TRUE((*ref)->prefill(ctx).ok());
  const auto p = top_k_softmax((*ref)->last_logits(), kTopK);
  std::vector<int64_t> counts(kTopK, 0);
  std::vector<double> probs;
  for (const auto& [id, prob] : p) probs.push_back(prob);
  int64_t n = 0;
  for (const auto& o : outputs) {
    if (o[0] != first) continue;
    ++n;
    const auto it = std::find_if(p.begin(), p.end(), [&](const auto& x) { return x.first == o[1]; });
    ASSERT_NE(it, p.end()) << what << ": token " << o[1] << " is outside the target's top " << kTopK;
    ++counts[static_cast<size_t>(it - p.begin())];
  }
  ASSERT_GT(n, 500) << what;
  const auto fit = sampling::testing::chi_square(counts, probs);
  EXPECT_TRUE(fit.fits()) << what << ": chi-square " << fit.statistic << " > " << fit.critical << " over " << n
                          << " draws";
  EXPECT_GT(spec.figures().verify_passes, kTrials / 2) << what;
}

TEST_F(StoryDraft, SampledOutputFollowsTheTargetDistribution) {
  const std::vector<int32_t> prompt = {1, 403, 407, 261, 378};  // BOS and four story tokens
  SpeculationConfig c;
  c.draft_max = 2;
  c.adaptive = false;
  auto drafter = ModelDrafter::create(*target_, *draft_, *draft_backend_, 256);
  ASSERT_TRUE(drafter.ok());
  Speculator with_model(std::move(*drafter), c);
  expect_sampled_distribution(*target_, *backend_, with_model, prompt, "model drafts");
  EXPECT_GT(with_model.figures().accepted, 0);
  EXPECT_LT(with_model.figures().accepted, with_model.figures().drafted);
}

TEST_F(StoryDraft, AnotherVocabularyIsRefusedWithTheReason) {
  auto other = load(data_path("models/tiny-llama-f32.gguf"));
  ASSERT_TRUE(other);
  auto r = ModelDrafter::create(*target_, *other, *draft_backend_, 256);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("vocabulary"), std::string::npos) << r.error().message;
  EXPECT_TRUE(check_draft_vocabulary(*target_, *draft_).ok());
}

struct FixturePair {
  const char* target;
  const char* draft;
};

// Each family's full-precision model drafted by a quantized sibling, and
// quantized targets (their multi-token kernels) drafted by another level.
constexpr FixturePair kPairs[] = {
    {"tiny-llama-f32.gguf", "tiny-llama-q4_0.gguf"},       {"tiny-llama-q8_0.gguf", "tiny-llama-q4_0.gguf"},
    {"tiny-llama-q4_k_m.gguf", "tiny-llama-q8_0.gguf"},    {"tiny-llama-q6_k.gguf", "tiny-llama-q4_k_m.gguf"},
    {"tiny-qwen2-f16.gguf", "tiny-qwen2-q4_k_m.gguf"},     {"tiny-gemma3-f32.gguf", "tiny-gemma3-q4_k_m.gguf"},
    {"tiny-smollm3-f32.gguf", "tiny-smollm3-q8_0.gguf"},   {"tiny-llama31-q4_k_m.gguf", "tiny-llama31-q8_0.gguf"},
    {"tiny-qwen3moe-f32.gguf", "tiny-qwen3moe-q4_k_m.gguf"}, {"tiny-gpt-oss-f32.gguf", "tiny-gpt-oss-q8_0.gguf"},
    {"tiny-qwen3moe-q8_0.gguf", "tiny-qwen3moe-q4_k_m.gguf"}, {"tiny-gpt-oss-mxfp4_moe.gguf", "tiny-gpt-oss-q8_0.gguf"},
    {"tiny-gemma3-q4_k_m.gguf", "tiny-gemma3-q8_0.gguf"},
};

class FixtureSpeculation : public ::testing::TestWithParam<FixturePair> {};

TEST_P(FixtureSpeculation, GreedyWithSpeculationIsPlainGreedyFor64Tokens) {
  auto target = load(data_path(std::string("models/") + GetParam().target));
  auto draft = load(data_path(std::string("models/") + GetParam().draft));
  ASSERT_TRUE(target && draft);
  auto backend = backend::make_cpu_backend({2});
  auto draft_backend = backend::make_cpu_backend({1});
  const auto prompt = read_ids(data_path("models/tokens.txt"));
  const auto f = expect_speculation_exact(*target, *backend, draft.get(), draft_backend.get(), prompt, 64, {1, 3, 6});
  EXPECT_GT(f.verify_passes, 0);
}

// The reason greedy speculation is exact on the CPU: each row of a verify
// pass (with rejected tails cut off in between, as speculation does) holds
// bit for bit the logits a one-token decode computes at that position.
// At every kernel level a laptop may run (types without few-token kernels
// there take the row dot per token).
TEST_P(FixtureSpeculation, VerifyRowsAreTheOneTokenLogitsBitForBit) {
  auto model = load(data_path(std::string("models/") + GetParam().target));
  ASSERT_TRUE(model);
  const auto prompt = read_ids(data_path("models/tokens.txt"));
  for (auto level : {quant::KernelLevel::Avx512, quant::KernelLevel::AvxVnni, quant::KernelLevel::Avx2}) {
    auto backend = backend::make_cpu_backend({2, backend::KernelChoice::Fastest, level});
    for (DType kv : {DType::F16, DType::F32}) {
      auto verifying = Session::create(*model, *backend, SessionConfig{512, kv, 64});
      auto decoding = Session::create(*model, *backend, SessionConfig{512, kv, 64});
      ASSERT_TRUE(verifying.ok() && decoding.ok());
      Session& s = **verifying;
      Session& r = **decoding;
      ASSERT_TRUE(s.prefill(prompt).ok());
      ASSERT_TRUE(r.prefill(prompt).ok());
      const auto n_vocab = static_cast<size_t>(s.n_vocab());
      const auto tokens = testing::synthetic_tokens(200, 7, static_cast<int32_t>(n_vocab));
      size_t next = 0;
      std::vector<float> rows;
      for (int step = 0; step < 20; ++step) {
        const size_t k = 1 + static_cast<size_t>(tokens[next] % 7);  // 2 to 8 tokens per pass
        const std::vector<int32_t> batch(tokens.begin() + static_cast<std::ptrdiff_t>(next),
                                         tokens.begin() + static_cast<std::ptrdiff_t>(next + k + 1));
        const size_t base = s.context().size();
        ASSERT_TRUE(s.verify(batch, rows).ok());
        for (size_t i = 0; i < batch.size(); ++i) {
          ASSERT_TRUE(r.decode(batch[i]).ok());
          ASSERT_EQ(std::memcmp(rows.data() + i * n_vocab, r.last_logits().data(), n_vocab * sizeof(float)), 0)
              << "level " << static_cast<int>(level) << ", KV " << traits(kv).name << ", pass " << step << ", row "
              << i << " of " << batch.size();
        }
        const size_t keep = static_cast<size_t>(tokens[next + 1]) % (k + 1);  // drafts kept
        ASSERT_TRUE(s.truncate(base + 1 + keep).ok());
        ASSERT_TRUE(r.truncate(base + 1 + keep).ok());
        next += keep + 1;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, FixtureSpeculation, ::testing::ValuesIn(kPairs),
                         [](const ::testing::TestParamInfo<FixturePair>& pi) { return hearth::testing::fixture_case_name({pi.param.target, "", 0, 0}); });

}  // namespace
}  // namespace hearth::runtime
