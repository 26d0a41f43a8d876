// Shared by the scheduler tests on every backend: logits of fixture tokens
// through Model::forward_sequences for several staggered sequences fed in
// uneven chunks over scattered pool blocks, the single-sequence pass over the
// same tokens, a scheduler run of staggered greedy sequences (the staggered
// stories case among them) and the cancellation case.
#pragma once

#include <gtest/gtest.h>
#include <hearth/engine/kv/kv_cache.h>
#include <hearth/engine/kv/kv_pool.h>
#include <hearth/engine/model/model.h>
#include <hearth/engine/runtime/scheduler.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <numeric>
#include <vector>

#include "runtime_fixture.h"

namespace hearth::runtime::testing {

inline sampling::SamplerConfig greedy() {
  sampling::SamplerConfig c;
  c.temperature = 0.0f;
  return c;
}

// The solo run every batched reply is held to: `session` fresh, greedy.
inline std::vector<int32_t> solo_greedy(Session& session, const std::vector<int32_t>& prompt, int32_t max_tokens) {
  GenerateOptions o;
  o.max_tokens = max_tokens;
  o.sampler = greedy();
  auto r = session.generate(prompt, o, nullptr, nullptr);
  EXPECT_TRUE(r.ok()) << r.error().message;
  return r.ok() ? r->tokens : std::vector<int32_t>{};
}

// What a staggered run gave each sequence, and how many steps sampled more
// than one sequence (that the sequences did run together).
struct StaggeredRun {
  std::vector<SequenceId> ids;  // in submission order: ids[i] ran prompts[i]
  std::map<SequenceId, std::vector<int32_t>> tokens;
  std::map<SequenceId, StopReason> reasons;
  int64_t multi_steps = 0;
};

// Submits prompts[i] (greedy, max_tokens tokens) one every `every` steps,
// stepping `sched` until every sequence has finished or after max_steps
// steps. `run` receives the events, so it must outlive the sequences.
// Fatal failures return early: call it through ASSERT_NO_FATAL_FAILURE.
inline void run_staggered(Scheduler& sched, const std::vector<std::vector<int32_t>>& prompts, int32_t max_tokens,
                          int every, int max_steps, StaggeredRun& run) {
  for (int step = 0; step < max_steps && (run.ids.size() < prompts.size() || sched.active() > 0); ++step) {
    if (step % every == 0 && run.ids.size() < prompts.size()) {
      SequenceRequest r;
      r.prompt = prompts[run.ids.size()];
      r.sampler = greedy();
      r.max_tokens = max_tokens;
      auto id = sched.submit(std::move(r), [&run](const SequenceEvent& e) {
        if (e.kind == SequenceEventKind::Token) run.tokens[e.id].push_back(e.token);
        if (e.kind == SequenceEventKind::Finished) run.reasons[e.id] = e.reason;
      });
      ASSERT_TRUE(id.ok()) << id.error().message;
      run.ids.push_back(*id);
    }
    auto rep = sched.step();
    ASSERT_TRUE(rep.ok()) << rep.error().message;
    if (rep->sampled.size() > 1) ++run.multi_steps;
  }
}

// The staggered stories case: eight stories on stories260K, "Once upon a
// time" and a different tail of 3..38 tokens each, 64 tokens each, submitted
// two steps apart into steps of 24 tokens, so that longer prompts are
// prefilled in chunks beside the others' decode tokens.
inline constexpr int kStorySeqs = 8, kStoryTokens = 64, kStoryEvery = 2, kStoryMaxSteps = 400;
inline constexpr int64_t kStoryCtx = 160;

inline std::vector<std::vector<int32_t>> story_prompts(int32_t n_vocab) {
  const std::vector<int32_t> once = hearth::testing::read_ids(data_path("models/stories260K.prompt-tokens.txt"));
  std::vector<std::vector<int32_t>> prompts;
  for (int i = 0; i < kStorySeqs; ++i) {
    prompts.push_back(concat(once, synthetic_tokens(static_cast<size_t>(3 + 5 * i), 100u + static_cast<uint32_t>(i),
                                                    n_vocab)));
  }
  return prompts;
}

inline SchedulerConfig story_scheduler_config() {
  SchedulerConfig config;
  config.n_ctx = kStoryCtx;
  config.parallel = kStorySeqs;
  config.max_batch_tokens = 24;  // longer prompts take several steps
  config.share_prefixes = false;
  return config;
}

// Two sequences (70 and 20 prompt tokens, 100 tokens each) on `sched`, a
// fresh scheduler of 256 positions per sequence: each cancelled one leaves at
// the next step with its blocks back in the pool while the other goes on.
inline void expect_cancel_frees_blocks(Scheduler& sched, int32_t n_vocab) {
  const int64_t start = sched.pool().free_blocks();
  std::atomic<bool> stop_a{false}, stop_b{false};
  std::map<SequenceId, StopReason> reasons;
  auto on = [&](const SequenceEvent& e) {
    if (e.kind == SequenceEventKind::Finished) reasons[e.id] = e.reason;
  };
  SequenceRequest ra;
  ra.prompt = synthetic_tokens(70, 1, n_vocab);  // three blocks
  ra.sampler = greedy();
  ra.max_tokens = 100;
  ra.cancel = Cancellation(&stop_a);
  SequenceRequest rb = ra;
  rb.prompt = synthetic_tokens(20, 2, n_vocab);
  rb.cancel = Cancellation(&stop_b);
  auto a = sched.submit(ra, on);
  auto b = sched.submit(rb, on);
  ASSERT_TRUE(a.ok() && b.ok());
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(sched.step().ok());
  EXPECT_EQ(sched.pool().free_blocks(), start - 3 - 1);  // 75 positions and 25 positions so far
  stop_a = true;
  auto rep = sched.step();
  ASSERT_TRUE(rep.ok());
  EXPECT_EQ(reasons[*a], StopReason::Cancelled);
  EXPECT_EQ(sched.pool().free_blocks(), start - 1);
  EXPECT_EQ(rep->sampled, std::vector<SequenceId>{*b});
  stop_b = true;
  ASSERT_TRUE(sched.step().ok());
  EXPECT_EQ(reasons[*b], StopReason::Cancelled);
  EXPECT_EQ(sched.pool().free_blocks(), start);
  EXPECT_EQ(sched.active(), 0);
}

// Logits of every position of each sequence of `texts` (sequence s is
// texts[s]; they start at different passes), through forward_sequences.
// Sequences of different tokens catch a token that reads another
// sequence's keys; sequences of the same tokens would not.
inline std::vector<std::vector<float>> batched_logits(const model::Model& m, backend::Backend& be,
                                                      const std::vector<std::vector<int32_t>>& texts) {
  const auto n_seqs = static_cast<int>(texts.size());
  int32_t longest = 0, blocks = 1;
  for (const auto& t : texts) {
    longest = std::max(longest, static_cast<int32_t>(t.size()));
    blocks += (static_cast<int32_t>(t.size()) + 31) / 32;
  }
  const model::HParams& hp = m.hparams();
  auto pool = kv::KvPool::create(be, kv::KvPoolConfig{hp.n_layer, hp.n_head_kv, hp.head_dim, DType::F16, blocks,
                                                      longest});
  EXPECT_TRUE(pool.ok()) << pool.error().message;
  if (!pool.ok()) return {};
  // Waste one block first so no table is the identity.
  EXPECT_TRUE((*pool)->allocate().ok());
  const int32_t tb = (*pool)->table_blocks();
  std::vector<int32_t> tables(static_cast<size_t>(n_seqs * tb), 0);
  std::vector<int32_t> done(static_cast<size_t>(n_seqs), 0), held(static_cast<size_t>(n_seqs), 0);
  std::vector<std::vector<float>> out(static_cast<size_t>(n_seqs));
  const int32_t chunks[] = {7, 1, 13, 3, 1, 9};
  for (int pass = 0; pass < 200; ++pass) {
    std::vector<int32_t> ids, pos, seq, rows;
    for (int s = 0; s < n_seqs; ++s) {
      if (pass < 2 * s) continue;  // staggered start
      const std::vector<int32_t>& tokens = texts[static_cast<size_t>(s)];
      const auto n = static_cast<int32_t>(tokens.size());
      int32_t& d = done[static_cast<size_t>(s)];
      const int32_t k = std::min(chunks[(pass + s) % 6], n - d);
      for (int32_t i = 0; i < k; ++i) {
        while (held[static_cast<size_t>(s)] * 32 <= d + i) {
          auto b = (*pool)->allocate();
          EXPECT_TRUE(b.ok());
          tables[static_cast<size_t>(s * tb + held[static_cast<size_t>(s)]++)] = *b;
        }
        ids.push_back(tokens[static_cast<size_t>(d + i)]);
        pos.push_back(d + i);
        seq.push_back(s);
        rows.push_back(static_cast<int32_t>(ids.size() - 1));
      }
      d += k;
    }
    if (ids.empty()) {
      if (pass >= 2 * n_seqs) break;  // every sequence has started and finished
      continue;
    }
    std::vector<float> logits;
    auto st = m.forward_sequences(be, **pool, model::SequenceBatch{ids, pos, seq, tables, rows}, logits);
    EXPECT_TRUE(st.ok()) << st.error().message;
    if (!st.ok()) break;
    for (size_t r = 0; r < rows.size(); ++r) {
      auto& o = out[static_cast<size_t>(seq[r])];
      o.insert(o.end(), logits.begin() + static_cast<std::ptrdiff_t>(r * static_cast<size_t>(hp.n_vocab)),
               logits.begin() + static_cast<std::ptrdiff_t>((r + 1) * static_cast<size_t>(hp.n_vocab)));
    }
  }
  return out;
}

// `n_seqs` sequences of the same tokens.
inline std::vector<std::vector<float>> batched_logits(const model::Model& m, backend::Backend& be,
                                                      const std::vector<int32_t>& tokens, int n_seqs) {
  return batched_logits(m, be, std::vector<std::vector<int32_t>>(static_cast<size_t>(n_seqs), tokens));
}

// Logits of every position in one single-sequence pass.
inline std::vector<float> solo_logits(const model::Model& m, backend::Backend& be, const std::vector<int32_t>& tokens) {
  auto cache = kv::KvCache::create(be, m.kv_config(static_cast<int64_t>(tokens.size()), DType::F16));
  EXPECT_TRUE(cache.ok()) << cache.error().message;
  if (!cache.ok()) return {};
  std::vector<int32_t> pos(tokens.size());
  std::iota(pos.begin(), pos.end(), 0);
  std::vector<float> logits;
  EXPECT_TRUE(m.forward(be, **cache, model::Batch{tokens, pos}, model::LogitsRows::All, logits).ok());
  return logits;
}

}  // namespace hearth::runtime::testing
