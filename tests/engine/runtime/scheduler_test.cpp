// The continuous-batching scheduler on the real engine (CPU backend):
// staggered sequences produce exactly the tokens of their solo runs on the
// story model; the multi-sequence pass's logits agree with the reference
// engine's fixtures and with the single-sequence pass (a sliding-window
// model included); cancellation frees blocks at once; priorities hold; a
// shared prompt prefix is reused from another sequence's blocks.
#include <hearth/engine/kv/memory_estimate.h>
#include <hearth/engine/runtime/scheduler.h>

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <numeric>

#include "runtime_fixture.h"
#include "sequence_batch.h"
#include "windowed_model.h"

namespace hearth::runtime {
namespace {

using namespace testing;
using hearth::testing::compare_logits;
using hearth::testing::FixtureCase;
using hearth::testing::fixture_case_name;
using hearth::testing::kFixtureCases;
using hearth::testing::read_f32;
using hearth::testing::read_ids;

class SchedulerTest : public ModelFixture {
 protected:
  std::unique_ptr<Scheduler> scheduler(SchedulerConfig config) {
    auto s = Scheduler::create(*model_, *backend_, config);
    EXPECT_TRUE(s.ok()) << s.error().message;
    return s.ok() ? std::move(*s) : nullptr;
  }
  // The solo run: a fresh Session, greedy.
  std::vector<int32_t> solo(const std::vector<int32_t>& prompt, int32_t max_tokens, int64_t n_ctx) {
    return solo_greedy(*session(n_ctx, DType::F16), prompt, max_tokens);
  }
};

// Eight stories, submitted two steps apart, prefilled in chunks beside the
// others' decode tokens: each continues exactly as it does alone.
TEST_F(SchedulerTest, StaggeredSequencesProduceTheirSoloTokens) {
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
  for (int i = 0; i < kStorySeqs; ++i) {
    const SequenceId id = run.ids[static_cast<size_t>(i)];
    EXPECT_EQ(run.reasons[id], StopReason::MaxTokens);
    EXPECT_EQ(run.tokens[id], solo(prompts[static_cast<size_t>(i)], kStoryTokens, kStoryCtx)) << "sequence " << i;
  }
}

// Multi-sequence passes over the fixture tokens: three sequences at
// different offsets, fed in uneven chunks in the same passes, with scattered
// blocks. Every position's logits meet the fixture tolerance and match the
// single-sequence pass.
class SequencePass : public ModelFixture, public ::testing::WithParamInterface<FixtureCase> {};

TEST_P(SequencePass, LogitsMatchTheFixtureAndTheSinglePass) {
  const FixtureCase& c = GetParam();
  load(std::string("models/") + c.model);
  const auto tokens = read_ids(data_path(std::string("models/") + c.tokens));
  const auto ref = read_f32(data_path(std::string("models/") + c.model + ".logits.f32"));
  const auto n_vocab = static_cast<size_t>(model_->hparams().n_vocab);
  const auto solo = solo_logits(*model_, *backend_, tokens);
  // A decoy of other tokens runs ahead in table 0: a token that read
  // another sequence's keys would see its keys.
  const auto decoy = synthetic_tokens(tokens.size(), 99, static_cast<int32_t>(n_vocab));
  const auto decoy_solo = solo_logits(*model_, *backend_, decoy);
  auto got = batched_logits(*model_, *backend_, {decoy, tokens, tokens, tokens});
  ASSERT_EQ(got.size(), 4u);
  const auto d = compare_logits(got[0], decoy_solo, n_vocab);
  EXPECT_GE(d.min_cosine, c.min_cosine) << "the decoy";
  EXPECT_GE(d.top1, c.min_top1) << "the decoy";
  got.erase(got.begin());
  for (size_t s = 0; s < got.size(); ++s) {
    ASSERT_EQ(got[s].size(), ref.size()) << "sequence " << s;
    const auto a = compare_logits(got[s], ref, n_vocab);
    EXPECT_GE(a.min_cosine, c.min_cosine) << "sequence " << s;
    EXPECT_GE(a.top1, c.min_top1) << "sequence " << s;
    // Against Hearth's own single-sequence pass over the same tokens: the
    // same tolerance (chunks of one row run the decode kernels, longer ones
    // the GEMM tiles, whose activation rounding differs).
    const auto b = compare_logits(got[s], solo, n_vocab);
    EXPECT_GE(b.min_cosine, c.min_cosine) << "sequence " << s;
    EXPECT_GE(b.top1, c.min_top1) << "sequence " << s;
    // F32 weights: the same kernels on the same rows, to rounding.
    if (c.min_cosine == hearth::testing::kF32Cosine) {
      EXPECT_LT(max_rel_diff(got[s], solo), 1e-5) << "sequence " << s;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, SequencePass, ::testing::ValuesIn(kFixtureCases),
                         [](const auto& p) { return fixture_case_name(p.param); });

// Gemma 2 with a sliding window of 24 on its even layers: the pool holds all
// positions and the kernel masks the window; 64 positions cross it.
TEST(SequencePassWindowed, SlidingWindowLogitsMatchTheSinglePass) {
  const auto file = write_windowed_model(WindowedModelSpec{}, "sched");
  const std::string& path = file.path();
  auto m = model::Model::load(path);
  ASSERT_TRUE(m.ok()) << m.error().message;
  auto be = backend::make_cpu_backend({1});
  const auto tokens = synthetic_tokens(80, 7, static_cast<int32_t>((*m)->hparams().n_vocab));
  const auto solo = solo_logits(**m, *be, tokens);
  const auto got = batched_logits(**m, *be, tokens, 3);
  for (size_t s = 0; s < got.size(); ++s) {
    ASSERT_EQ(got[s].size(), solo.size());
    EXPECT_LT(max_rel_diff(got[s], solo), 1e-4) << "sequence " << s;
  }
}

// A cancelled sequence leaves at the next step with its blocks back in the
// pool; the others go on.
TEST_F(SchedulerTest, CancelFreesBlocksAtTheNextStep) {
  load("models/stories260K.gguf");
  SchedulerConfig config;
  config.n_ctx = 256;
  config.parallel = 4;
  auto sched = scheduler(config);
  ASSERT_TRUE(sched);
  expect_cancel_frees_blocks(*sched, n_vocab());
}

// Sixteen background sequences (four slots) fill every step's budget; an
// interactive one submitted later gets a token at every step from its first.
TEST_F(SchedulerTest, InteractiveSequenceGetsATokenEveryStepUnderABurst) {
  load("models/stories260K.gguf");
  SchedulerConfig config;
  config.n_ctx = 128;
  config.parallel = 4;
  config.max_batch_tokens = 16;
  auto sched = scheduler(config);
  ASSERT_TRUE(sched);
  std::map<SequenceId, std::vector<int32_t>> burst;
  std::vector<SequenceId> burst_ids;
  for (int i = 0; i < 16; ++i) {
    SequenceRequest r;
    r.prompt = synthetic_tokens(40, 50u + static_cast<uint32_t>(i), n_vocab());
    r.sampler = greedy();
    r.max_tokens = 60;
    r.priority = Priority::Background;
    auto id = sched->submit(std::move(r), [&](const SequenceEvent& e) {
      if (e.kind == SequenceEventKind::Token) burst[e.id].push_back(e.token);
    });
    ASSERT_TRUE(id.ok());
    burst_ids.push_back(*id);
  }
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(sched->step().ok());
  SequenceRequest hi;
  hi.prompt = synthetic_tokens(10, 9, n_vocab());
  hi.sampler = greedy();
  hi.max_tokens = 30;
  hi.priority = Priority::Interactive;
  int tokens = 0;
  auto id = sched->submit(std::move(hi), [&](const SequenceEvent& e) {
    if (e.kind == SequenceEventKind::Token) ++tokens;
  });
  ASSERT_TRUE(id.ok());
  for (int step = 0; step < 30; ++step) {
    auto rep = sched->step();
    ASSERT_TRUE(rep.ok());
    EXPECT_NE(std::find(rep->sampled.begin(), rep->sampled.end(), *id), rep->sampled.end()) << "step " << step;
    EXPECT_LE(rep->decode_tokens + rep->prompt_tokens, config.max_batch_tokens);
  }
  EXPECT_EQ(tokens, 30);
  EXPECT_EQ(sched->active(), 16);  // the burst is still being served
  // The pool was full: the interactive sequence preempted a background one,
  // which recomputed its context later. Every reply is still its solo one.
  while (sched->active() > 0) ASSERT_TRUE(sched->step().ok());
  for (int i = 0; i < 16; ++i) {
    EXPECT_EQ(burst[burst_ids[static_cast<size_t>(i)]],
              solo(synthetic_tokens(40, 50u + static_cast<uint32_t>(i), n_vocab()), 60, 128))
        << "background " << i;
  }
}

// A second request with the same 70-token prefix shares the first's blocks
// (two whole ones held twice, the partly filled third copied) and still
// produces its solo tokens.
TEST_F(SchedulerTest, SharedPromptPrefixReusesBlocksAndKeepsTheOutput) {
  load("models/stories260K.gguf");
  SchedulerConfig config;
  config.n_ctx = 256;
  config.parallel = 2;
  auto sched = scheduler(config);
  ASSERT_TRUE(sched);
  const auto system = synthetic_tokens(70, 3, n_vocab());
  const auto pa = concat(system, synthetic_tokens(6, 4, n_vocab()));
  const auto pb = concat(system, synthetic_tokens(9, 5, n_vocab()));
  std::map<SequenceId, std::vector<int32_t>> got;
  std::map<SequenceId, SequenceUsage> usage;
  auto on = [&](const SequenceEvent& e) {
    if (e.kind == SequenceEventKind::Token) got[e.id].push_back(e.token);
    usage[e.id] = e.usage;
  };
  SequenceRequest r;
  r.prompt = pa;
  r.sampler = greedy();
  r.max_tokens = 20;
  auto a = sched->submit(r, on);
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE(sched->step().ok());  // a's prompt is in the pool
  const int64_t before = sched->pool().free_blocks();
  r.prompt = pb;
  auto b = sched->submit(r, on);
  ASSERT_TRUE(b.ok());
  ASSERT_TRUE(sched->step().ok());
  // b took the copied third block (and, at 79 positions, nothing more); the
  // two whole blocks are a's.
  EXPECT_EQ(before - sched->pool().free_blocks(), 1);
  while (sched->active() > 0) ASSERT_TRUE(sched->step().ok());
  EXPECT_EQ(usage[*b].cached_tokens, 70);
  EXPECT_EQ(usage[*a].cached_tokens, 0);
  EXPECT_EQ(got[*a], solo(pa, 20, 256));
  EXPECT_EQ(got[*b], solo(pb, 20, 256));
}

// The run loop on its own thread serves submissions until they finish.
TEST_F(SchedulerTest, RunLoopServesRequestsFromAnotherThread) {
  load("models/stories260K.gguf");
  SchedulerConfig config;
  config.n_ctx = 128;
  auto sched = scheduler(config);
  ASSERT_TRUE(sched);
  sched->start();
  std::mutex m;
  std::condition_variable cv;
  int finished = 0;
  std::vector<std::vector<int32_t>> out(3);
  for (int i = 0; i < 3; ++i) {
    SequenceRequest r;
    r.prompt = synthetic_tokens(12, 20u + static_cast<uint32_t>(i), n_vocab());
    r.sampler = greedy();
    r.max_tokens = 16;
    ASSERT_TRUE(sched->submit(std::move(r), [&, i](const SequenceEvent& e) {
      std::lock_guard lock(m);
      if (e.kind == SequenceEventKind::Token) out[static_cast<size_t>(i)].push_back(e.token);
      if (e.kind == SequenceEventKind::Finished) ++finished;
      cv.notify_all();
    }).ok());
  }
  {
    std::unique_lock lock(m);
    // Generous: a few milliseconds of work.
    ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(60), [&] { return finished == 3; }));
  }
  sched->stop();
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(out[static_cast<size_t>(i)], solo(synthetic_tokens(12, 20u + static_cast<uint32_t>(i), n_vocab()), 16, 128));
  }
}

// The parallel estimate is what the scheduler allocates: parallel slots of
// the whole context, every layer (K and V, F16 rows) by hand.
TEST_F(SchedulerTest, PoolIsWhatTheParallelEstimateSays) {
  load("models/tiny-llama-q8_0.gguf");
  SchedulerConfig config;
  config.n_ctx = 100;  // 128 positions allocated per slot
  config.parallel = 3;
  config.max_batch_tokens = 64;
  const uint64_t kv_before = backend_->memory_use().kv_bytes;
  auto sched = scheduler(config);
  ASSERT_TRUE(sched);
  auto e = kv::estimate_parallel_memory(model_->memory_dims(), model_->weight_bytes(), 100, DType::F16, 3, 64);
  ASSERT_TRUE(e.ok()) << e.error().message;
  // 2 layers, 2 KV heads of 64 F16 values (128 bytes), K and V.
  const uint64_t by_hand = 3ull * 128 * 2 * 2 * 2 * 128;
  EXPECT_EQ(e->kv_bytes, by_hand);
  EXPECT_EQ(e->parallel, 3);
  EXPECT_EQ(sched->pool().bytes(), by_hand);
  EXPECT_EQ(backend_->memory_use().kv_bytes - kv_before, by_hand);
  EXPECT_EQ(sched->pool().total_blocks(), 3 * 4);
  EXPECT_EQ(kv::parallel_kv_bytes(2, 2, 64, 100, DType::F16, 0).error().code, ErrorCode::InvalidArgument);
  config.parallel = 0;
  EXPECT_EQ(Scheduler::create(*model_, *backend_, config).error().code, ErrorCode::InvalidArgument);
}

TEST_F(SchedulerTest, RefusesRequestsItCannotServe) {
  load("models/stories260K.gguf");
  SchedulerConfig config;
  config.n_ctx = 64;
  auto sched = scheduler(config);
  ASSERT_TRUE(sched);
  SequenceRequest r;
  EXPECT_EQ(sched->submit(r, nullptr).error().code, ErrorCode::InvalidArgument);  // empty prompt
  r.prompt = {1, 99999};
  EXPECT_EQ(sched->submit(r, nullptr).error().code, ErrorCode::InvalidArgument);
  r.prompt = synthetic_tokens(65, 1, n_vocab());
  EXPECT_EQ(sched->submit(r, nullptr).error().code, ErrorCode::LimitExceeded);
}

}  // namespace
}  // namespace hearth::runtime
