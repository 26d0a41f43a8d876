// Continuous batching with partial offload: the scheduler's passes over
// several sequences on a split backend, its first layers on Vulkan (lavapipe
// in CI) and the rest on the CPU. The KV pool keeps each layer's blocks on
// the backend that runs the layer; staggered greedy sequences produce
// exactly their solo tokens on the story model; a multi-sequence pass over a
// fixture model meets the reference engine's logits; a cancelled sequence
// gives its blocks back at the next step.
#include <gtest/gtest.h>
#include <hearth/engine/backend/cpu_backend.h>
#include <hearth/engine/backend/split_backend.h>
#include <hearth/engine/backend/vulkan/vulkan_backend.h>
#include <hearth/engine/runtime/scheduler.h>
#include <hearth/engine/runtime/session.h>

#include <string>

#include "../../runtime/runtime_fixture.h"
#include "../../runtime/sequence_batch.h"
#include "vulkan_test_env.h"

namespace hearth::vulkan {
namespace {

using backend::SplitBackend;
using backend::SplitPlacement;
using hearth::runtime::testing::batched_logits;
using hearth::runtime::testing::expect_cancel_frees_blocks;
using hearth::runtime::testing::greedy;
using hearth::runtime::testing::kStoryCtx;
using hearth::runtime::testing::kStoryEvery;
using hearth::runtime::testing::kStoryMaxSteps;
using hearth::runtime::testing::kStorySeqs;
using hearth::runtime::testing::kStoryTokens;
using hearth::runtime::testing::run_staggered;
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
using runtime::SequenceId;
using runtime::StopReason;

std::unique_ptr<SplitBackend> make_split(int64_t gpu_layers) {
  auto vk = VulkanBackend::create(testing::test_config());
  EXPECT_TRUE(vk.ok()) << vk.error().message;
  if (!vk.ok()) return nullptr;
  return std::make_unique<SplitBackend>(std::move(vk).value(), backend::make_cpu_backend({2}),
                                        SplitPlacement{gpu_layers});
}

std::unique_ptr<model::Model> load(const std::string& rel_path) {
  auto m = model::Model::load(data_path(rel_path));
  EXPECT_TRUE(m.ok()) << m.error().message;
  return m.ok() ? std::move(*m) : nullptr;
}

// The solo run: a fresh single-sequence Session on the CPU alone, greedy.
std::vector<int32_t> cpu_solo(const model::Model& m, const std::vector<int32_t>& prompt, int32_t max_tokens) {
  auto cpu = backend::make_cpu_backend({1});
  auto s = runtime::Session::create(m, *cpu, runtime::SessionConfig{kStoryCtx, DType::F16, 64});
  EXPECT_TRUE(s.ok()) << s.error().message;
  if (!s.ok()) return {};
  runtime::GenerateOptions o;
  o.max_tokens = max_tokens;
  o.sampler = greedy();
  auto r = (*s)->generate(prompt, o, nullptr, nullptr);
  EXPECT_TRUE(r.ok()) << r.error().message;
  return r.ok() ? r->tokens : std::vector<int32_t>{};
}

TEST(SplitScheduler, TheSplitBatchesWhenBothSidesDo) {
  auto split = make_split(1);
  ASSERT_TRUE(split);
  EXPECT_TRUE(split->supports_sequence_batches());
}

// The pool's blocks of the GPU layers are a Vulkan buffer, those of the CPU
// layers another; the Vulkan kernels reject a KV buffer that is not theirs,
// so the passes below also check the placement.
TEST(SplitScheduler, PoolBlocksLiveWhereTheirLayerRuns) {
  auto m = load("models/stories260K.gguf");
  ASSERT_TRUE(m);
  const int64_t n_layer = m->hparams().n_layer;
  ASSERT_GE(n_layer, 2);
  auto split = make_split(n_layer / 2);
  ASSERT_TRUE(split);
  auto pool = kv::KvPool::create(*split, kv::KvPoolConfig{n_layer, m->hparams().n_head_kv, m->hparams().head_dim,
                                                          DType::F16, 8, 128});
  ASSERT_TRUE(pool.ok()) << pool.error().message;
  const backend::Buffer* gpu = (*pool)->layer_view(0, nullptr, nullptr).buffer;
  const backend::Buffer* cpu = (*pool)->layer_view(n_layer - 1, nullptr, nullptr).buffer;
  EXPECT_NE(gpu, cpu);
  for (int64_t l = 0; l < n_layer; ++l) {
    const backend::KvView v = (*pool)->layer_view(l, nullptr, nullptr);
    EXPECT_EQ(v.buffer, l < n_layer / 2 ? gpu : cpu) << "layer " << l;
    // Each buffer starts with its own first layer.
    const int64_t first = l < n_layer / 2 ? 0 : n_layer / 2;
    EXPECT_EQ(v.k_offset, static_cast<size_t>(l - first) * 2 * (v.v_offset - v.k_offset)) << "layer " << l;
  }
  EXPECT_EQ((*pool)->bytes(), kv::kv_pool_bytes((*pool)->config()).value());
}

// Eight stories, submitted two steps apart and prefilled in chunks beside
// the others' decode tokens, with half the layers on the GPU: each continues
// exactly as it does alone on the CPU.
TEST(SplitScheduler, StaggeredSequencesProduceTheirSoloTokens) {
  auto m = load("models/stories260K.gguf");
  ASSERT_TRUE(m);
  auto split = make_split(m->hparams().n_layer / 2);
  ASSERT_TRUE(split);
  auto sched = Scheduler::create(*m, *split, story_scheduler_config());
  ASSERT_TRUE(sched.ok()) << sched.error().message;
  const auto prompts = story_prompts(static_cast<int32_t>(m->hparams().n_vocab));
  const int64_t free_at_start = (*sched)->pool().free_blocks();
  StaggeredRun run;
  ASSERT_NO_FATAL_FAILURE(run_staggered(**sched, prompts, kStoryTokens, kStoryEvery, kStoryMaxSteps, run));
  EXPECT_GT(run.multi_steps, 30);  // the sequences did run together
  // Each pass crossed over: the embedding lookup on the CPU, the first
  // layers on the GPU, the rest and the head on the CPU.
  EXPECT_EQ(split->last_segments(), 3);
  EXPECT_EQ((*sched)->pool().free_blocks(), free_at_start);
  for (int i = 0; i < kStorySeqs; ++i) {
    const SequenceId id = run.ids[static_cast<size_t>(i)];
    const auto& got = run.tokens[id];
    EXPECT_EQ(run.reasons[id], StopReason::MaxTokens);
    ASSERT_EQ(got.size(), static_cast<size_t>(kStoryTokens)) << "sequence " << i;
    EXPECT_EQ(got, cpu_solo(*m, prompts[static_cast<size_t>(i)], kStoryTokens)) << "sequence " << i;
  }
}

TEST(SplitScheduler, CancelFreesBlocksAtTheNextStep) {
  auto m = load("models/stories260K.gguf");
  ASSERT_TRUE(m);
  auto split = make_split(1);
  ASSERT_TRUE(split);
  runtime::SchedulerConfig config;
  config.n_ctx = 256;
  config.parallel = 4;
  auto sched = Scheduler::create(*m, *split, config);
  ASSERT_TRUE(sched.ok()) << sched.error().message;
  expect_cancel_frees_blocks(**sched, static_cast<int32_t>(m->hparams().n_vocab));
}

// A decoy sequence of other tokens and two sequences of the fixture tokens in
// the same passes, one layer on the GPU: the fixture sequences meet the
// reference engine's logits, and a token that read another sequence's keys
// (on either side of the split) would not.
class SplitSequencePass : public ::testing::TestWithParam<FixtureCase> {};

TEST_P(SplitSequencePass, LogitsMatchTheFixture) {
  const FixtureCase& c = GetParam();
  auto m = load(std::string("models/") + c.model);
  ASSERT_TRUE(m);
  auto split = make_split(1);
  ASSERT_TRUE(split);
  const auto tokens = read_ids(data_path(std::string("models/") + c.tokens));
  const auto ref = read_f32(data_path(std::string("models/") + c.model + ".logits.f32"));
  const auto n_vocab = static_cast<size_t>(m->hparams().n_vocab);
  const auto decoy = synthetic_tokens(tokens.size(), 99, static_cast<int32_t>(n_vocab));
  const auto got = batched_logits(*m, *split, {decoy, tokens, tokens});
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(split->last_segments(), 3);  // CPU lookup, GPU layer, CPU layers and head
  for (size_t s = 1; s < got.size(); ++s) {
    ASSERT_EQ(got[s].size(), ref.size());
    const auto a = compare_logits(got[s], ref, n_vocab);
    EXPECT_GE(a.min_cosine, c.min_cosine) << "sequence " << s;
    EXPECT_GE(a.top1, c.min_top1) << "sequence " << s;
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, SplitSequencePass, ::testing::ValuesIn(kFixtureCases),
                         [](const auto& p) { return fixture_case_name(p.param); });

}  // namespace
}  // namespace hearth::vulkan
