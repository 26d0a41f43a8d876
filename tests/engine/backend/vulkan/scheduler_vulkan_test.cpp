// Continuous batching on the Vulkan backend (lavapipe in CI), mirroring the
// CPU scheduler tests: one forward pass serves several sequences, each token
// storing and attending through its own sequence's block table. Staggered
// greedy sequences produce exactly their solo tokens on the story model; the
// multi-sequence pass's logits meet the reference engine's fixtures (and
// agree with the single-sequence pass, a sliding-window model included); a
// cancelled sequence gives its blocks back at the next step.
#include <gtest/gtest.h>
#include <hearth/engine/backend/vulkan/vulkan_backend.h>
#include <hearth/engine/runtime/scheduler.h>
#include <hearth/engine/runtime/session.h>

#include <string>

#include "../../runtime/runtime_fixture.h"
#include "../../runtime/sequence_batch.h"
#include "../../runtime/windowed_model.h"
#include "vulkan_test_env.h"

namespace hearth::vulkan {
namespace {

using hearth::runtime::testing::batched_logits;
using hearth::runtime::testing::expect_cancel_frees_blocks;
using hearth::runtime::testing::greedy;
using hearth::runtime::testing::kStoryCtx;
using hearth::runtime::testing::kStoryEvery;
using hearth::runtime::testing::kStoryMaxSteps;
using hearth::runtime::testing::kStorySeqs;
using hearth::runtime::testing::kStoryTokens;
using hearth::runtime::testing::max_rel_diff;
using hearth::runtime::testing::run_staggered;
using hearth::runtime::testing::solo_logits;
using hearth::runtime::testing::StaggeredRun;
using hearth::runtime::testing::story_prompts;
using hearth::runtime::testing::story_scheduler_config;
using hearth::runtime::testing::synthetic_tokens;
using hearth::testing::compare_logits;
using hearth::testing::data_path;
using hearth::testing::FixtureCase;
using hearth::testing::fixture_case_name;
using hearth::testing::kFixtureCases;
using hearth::testing::read_f32;
using hearth::testing::read_ids;
using runtime::Scheduler;
using runtime::SchedulerConfig;
using runtime::SequenceId;
using runtime::StopReason;

class VulkanScheduler : public ::testing::Test {
 protected:
  void load(const std::string& rel_path) {
    auto be = VulkanBackend::create(testing::test_config());
    ASSERT_TRUE(be.ok()) << be.error().message;
    backend_ = std::move(*be);
    ASSERT_TRUE(backend_->supports_sequence_batches());
    auto m = model::Model::load(data_path(rel_path));
    ASSERT_TRUE(m.ok()) << m.error().message;
    model_ = std::move(*m);
  }
  std::unique_ptr<Scheduler> scheduler(const SchedulerConfig& config) {
    auto s = Scheduler::create(*model_, *backend_, config);
    EXPECT_TRUE(s.ok()) << s.error().message;
    return s.ok() ? std::move(*s) : nullptr;
  }
  // The solo run: a fresh single-sequence Session, greedy, on `be`.
  std::vector<int32_t> solo(backend::Backend& be, const std::vector<int32_t>& prompt, int32_t max_tokens,
                            int64_t n_ctx, DType kv_type = DType::F16) {
    auto s = runtime::Session::create(*model_, be, runtime::SessionConfig{n_ctx, kv_type, 64});
    EXPECT_TRUE(s.ok()) << s.error().message;
    if (!s.ok()) return {};
    runtime::GenerateOptions o;
    o.max_tokens = max_tokens;
    o.sampler = greedy();
    auto r = (*s)->generate(prompt, o, nullptr, nullptr);
    EXPECT_TRUE(r.ok()) << r.error().message;
    return r.ok() ? r->tokens : std::vector<int32_t>{};
  }
  int32_t n_vocab() const { return static_cast<int32_t>(model_->hparams().n_vocab); }

  std::unique_ptr<VulkanBackend> backend_;
  std::unique_ptr<model::Model> model_;
};

// Eight stories, submitted two steps apart, prefilled in chunks beside the
// others' decode tokens in the same Vulkan passes: each continues exactly as
// it does alone, on Vulkan and on the CPU.
TEST_F(VulkanScheduler, StaggeredSequencesProduceTheirSoloTokens) {
  load("models/stories260K.gguf");
  const auto prompts = story_prompts(n_vocab());
  auto sched = scheduler(story_scheduler_config());
  ASSERT_TRUE(sched);
  const int64_t free_at_start = sched->pool().free_blocks();
  StaggeredRun run;
  ASSERT_NO_FATAL_FAILURE(run_staggered(*sched, prompts, kStoryTokens, kStoryEvery, kStoryMaxSteps, run));
  EXPECT_GT(run.multi_steps, 30);  // the sequences did run together
  EXPECT_EQ(sched->active(), 0);
  EXPECT_EQ(sched->pool().free_blocks(), free_at_start);
  auto cpu = backend::make_cpu_backend({1});
  for (int i = 0; i < kStorySeqs; ++i) {
    const SequenceId id = run.ids[static_cast<size_t>(i)];
    const auto& prompt = prompts[static_cast<size_t>(i)];
    const auto& got = run.tokens[id];
    EXPECT_EQ(run.reasons[id], StopReason::MaxTokens);
    ASSERT_EQ(got.size(), static_cast<size_t>(kStoryTokens)) << "sequence " << i;
    EXPECT_EQ(got, solo(*backend_, prompt, kStoryTokens, kStoryCtx)) << "sequence " << i << " against Vulkan alone";
    EXPECT_EQ(got, solo(*cpu, prompt, kStoryTokens, kStoryCtx)) << "sequence " << i << " against the CPU alone";
  }
}

// Multi-sequence passes over the fixture tokens on Vulkan: a decoy sequence
// of other tokens (ahead of the rest, table 0) and three sequences of the
// fixture tokens at different offsets, fed in uneven chunks in the same
// passes, with scattered blocks. Every fixture position's logits meet the
// fixture tolerance and the single-sequence pass's; the decoy's meet its own
// single-sequence pass's. A token that read another sequence's keys would
// see the decoy's.
class VulkanSequencePass : public ::testing::TestWithParam<FixtureCase> {};

void expect_close(const std::vector<float>& got, const std::vector<float>& want, size_t n_vocab, const FixtureCase& c,
                  const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  const auto a = compare_logits(got, want, n_vocab);
  EXPECT_GE(a.min_cosine, c.min_cosine) << what;
  EXPECT_GE(a.top1, c.min_top1) << what;
}

TEST_P(VulkanSequencePass, LogitsMatchTheFixtureAndTheSinglePass) {
  const FixtureCase& c = GetParam();
  auto be = VulkanBackend::create(testing::test_config());
  ASSERT_TRUE(be.ok()) << be.error().message;
  auto m = model::Model::load(data_path(std::string("models/") + c.model));
  ASSERT_TRUE(m.ok()) << m.error().message;
  const auto tokens = read_ids(data_path(std::string("models/") + c.tokens));
  const auto ref = read_f32(data_path(std::string("models/") + c.model + ".logits.f32"));
  const auto n_vocab = static_cast<size_t>((*m)->hparams().n_vocab);
  const auto decoy = synthetic_tokens(tokens.size(), 99, static_cast<int32_t>(n_vocab));
  const auto solo = solo_logits(**m, **be, tokens);
  const auto decoy_solo = solo_logits(**m, **be, decoy);
  const auto got = batched_logits(**m, **be, {decoy, tokens, tokens, tokens});
  ASSERT_EQ(got.size(), 4u);
  expect_close(got[0], decoy_solo, n_vocab, c, "the decoy against its single pass");
  for (size_t s = 1; s < got.size(); ++s) {
    expect_close(got[s], ref, n_vocab, c, "sequence " + std::to_string(s) + " against the fixture");
    expect_close(got[s], solo, n_vocab, c, "sequence " + std::to_string(s) + " against the single pass");
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, VulkanSequencePass, ::testing::ValuesIn(kFixtureCases),
                         [](const auto& p) { return fixture_case_name(p.param); });

// Gemma 2 with a sliding window of 24 on its even layers: the pool holds
// every position and the attention shader masks the window; 80 positions
// cross it. Each sequence (a decoy of other tokens first) agrees with its
// single-sequence pass (whose rings the Vulkan sliding-window tests hold to
// the CPU).
TEST(VulkanSequencePassWindowed, SlidingWindowLogitsMatchTheSinglePass) {
  const auto file = runtime::testing::write_windowed_model(runtime::testing::WindowedModelSpec{}, "vksched");
  const std::string& path = file.path();
  auto m = model::Model::load(path);
  ASSERT_TRUE(m.ok()) << m.error().message;
  auto be = VulkanBackend::create(testing::test_config());
  ASSERT_TRUE(be.ok()) << be.error().message;
  const auto n_vocab = static_cast<int32_t>((*m)->hparams().n_vocab);
  const auto tokens = synthetic_tokens(80, 7, n_vocab);
  const auto decoy = synthetic_tokens(80, 8, n_vocab);
  const auto solo = solo_logits(**m, **be, tokens);
  const auto decoy_solo = solo_logits(**m, **be, decoy);
  const auto got = batched_logits(**m, **be, {decoy, tokens, tokens});
  ASSERT_EQ(got.size(), 3u);
  for (size_t s = 0; s < got.size(); ++s) {
    const auto& want = s == 0 ? decoy_solo : solo;
    ASSERT_EQ(got[s].size(), want.size());
    EXPECT_LT(max_rel_diff(got[s], want), 1e-3) << "sequence " << s;
  }
}

// A Q8_0 pool (the attention_q8_0 and kv_store_q8_0 shaders): four
// staggered sequences each give the tokens of a Q8_0 cache alone (on a
// fixture model whose heads hold whole 32-value blocks).
TEST_F(VulkanScheduler, Q8_0PoolSequencesProduceTheirSoloTokens) {
  load("models/tiny-llama-f16.gguf");
  constexpr int kSeqs = 4, kTokens = 40;
  constexpr int64_t kCtx = 128;
  SchedulerConfig config;
  config.n_ctx = kCtx;
  config.parallel = kSeqs;
  config.max_batch_tokens = 16;
  config.kv_type = DType::Q8_0;
  config.share_prefixes = false;
  auto sched = scheduler(config);
  ASSERT_TRUE(sched);
  std::vector<std::vector<int32_t>> prompts;
  for (size_t i = 0; i < kSeqs; ++i) {
    prompts.push_back(synthetic_tokens(9 + 7 * i, 300u + static_cast<uint32_t>(i), n_vocab()));
  }
  StaggeredRun run;
  ASSERT_NO_FATAL_FAILURE(run_staggered(*sched, prompts, kTokens, 3, 300, run));
  EXPECT_GT(run.multi_steps, 20);
  for (int i = 0; i < kSeqs; ++i) {
    const auto& got = run.tokens[run.ids[static_cast<size_t>(i)]];
    ASSERT_EQ(got.size(), static_cast<size_t>(kTokens)) << "sequence " << i;
    EXPECT_EQ(got, solo(*backend_, prompts[static_cast<size_t>(i)], kTokens, kCtx, DType::Q8_0)) << "sequence " << i;
  }
}

// A cancelled sequence leaves at the next step with its blocks back in the
// pool; the other goes on.
TEST_F(VulkanScheduler, CancelFreesBlocksAtTheNextStep) {
  load("models/stories260K.gguf");
  SchedulerConfig config;
  config.n_ctx = 256;
  config.parallel = 4;
  auto sched = scheduler(config);
  ASSERT_TRUE(sched);
  expect_cancel_frees_blocks(*sched, n_vocab());
}

}  // namespace
}  // namespace hearth::vulkan
