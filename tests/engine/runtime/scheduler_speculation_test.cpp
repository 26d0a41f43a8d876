// Speculative decoding inside the continuous-batching scheduler (CPU
// backend, story model): sequences that draft (n-gram lookup, or a drafter
// that never agrees) emit exactly their solo greedy tokens; drafts only fill
// the rows a decode-only step leaves under kVerifyRowsMax; a sequence whose
// tokens are chosen by a callback (grammar, log-probabilities) never drafts.
#include <hearth/engine/runtime/scheduler.h>

#include <algorithm>
#include <limits>
#include <map>

#include "runtime_fixture.h"

namespace hearth::runtime {
namespace {

using namespace testing;
using hearth::testing::read_ids;

sampling::SamplerConfig greedy() {
  sampling::SamplerConfig c;
  c.temperature = 0.0f;
  return c;
}

// Proposes `length` copies of one token the story model never continues
// with: every draft is rejected at its first token.
class WrongDrafter final : public Drafter {
 public:
  explicit WrongDrafter(int32_t token) : token_(token) {}
  const char* name() const override { return "wrong"; }
  Result<Draft> propose(std::span<const int32_t>, int32_t max, const sampling::SamplerConfig&) override {
    Draft d;
    d.tokens.assign(static_cast<size_t>(max), token_);
    return d;
  }

 private:
  int32_t token_;
};

// Proposes the continuation `reply` (the solo run's tokens after `prompt`)
// from wherever the context stands, with its last proposal replaced by a
// wrong token every other step: verify passes that keep every draft and
// passes that reject some, on models whose replies never repeat.
class ScriptDrafter final : public Drafter {
 public:
  ScriptDrafter(size_t prompt_size, std::vector<int32_t> reply, int32_t n_vocab)
      : prompt_size_(prompt_size), reply_(std::move(reply)), n_vocab_(n_vocab) {}
  const char* name() const override { return "script"; }
  Result<Draft> propose(std::span<const int32_t> context, int32_t max, const sampling::SamplerConfig&) override {
    Draft d;
    // context = prompt + reply[0..g): the next token to verify from is reply[g - 1].
    const size_t g = context.size() - prompt_size_;
    for (size_t i = g; i < reply_.size() && d.tokens.size() < static_cast<size_t>(max); ++i) {
      d.tokens.push_back(reply_[i]);
    }
    if (!d.tokens.empty() && (++calls_ % 2 == 0)) d.tokens.back() = (d.tokens.back() + 1) % n_vocab_;
    return d;
  }

 private:
  size_t prompt_size_;
  std::vector<int32_t> reply_;
  int32_t n_vocab_;
  int calls_ = 0;
};

std::shared_ptr<Speculator> always_drafting(std::unique_ptr<Drafter> drafter, int32_t draft_max) {
  SpeculationConfig c;
  c.draft_max = draft_max;
  c.adaptive = false;  // drafts every step: the test is about exactness, not the policy
  return std::make_shared<Speculator>(std::move(drafter), c);
}

struct Totals {
  int64_t drafted = 0, accepted = 0, steps = 0;
  bool rows_within_limit = true;
  bool drafted_beside_prompt = false;
};

class SchedulerSpeculationTest : public ModelFixture {
 protected:
  void SetUp() override { load("models/stories260K.gguf"); }

  std::vector<int32_t> solo(const std::vector<int32_t>& prompt, int32_t max_tokens) {
    auto s = session(kCtx, DType::F16);
    GenerateOptions o;
    o.max_tokens = max_tokens;
    o.sampler = greedy();
    auto r = s->generate(prompt, o, nullptr, nullptr);
    EXPECT_TRUE(r.ok()) << r.error().message;
    return r.ok() ? r->tokens : std::vector<int32_t>{};
  }

  std::vector<int32_t> prompt(int i) {
    const std::vector<int32_t> once = read_ids(data_path("models/stories260K.prompt-tokens.txt"));
    return concat(once, synthetic_tokens(static_cast<size_t>(2 + 3 * i), 300u + static_cast<uint32_t>(i), n_vocab()));
  }

  // Submits `requests` two steps apart and steps until all are done.
  std::map<SequenceId, std::vector<int32_t>> run(std::vector<SequenceRequest> requests, Totals& totals,
                                                 std::vector<SequenceId>& ids, int32_t parallel) {
    SchedulerConfig config;
    config.n_ctx = kCtx;
    config.parallel = parallel;
    config.max_batch_tokens = 16;
    config.share_prefixes = false;
    auto sched = Scheduler::create(*model_, *backend_, config);
    EXPECT_TRUE(sched.ok()) << sched.error().message;
    std::map<SequenceId, std::vector<int32_t>> got;
    if (!sched.ok()) return got;
    const int64_t free_at_start = (*sched)->pool().free_blocks();
    const size_t n = requests.size();
    for (int step = 0; step < 1000 && (ids.size() < n || (*sched)->active() > 0); ++step) {
      if (step % 2 == 0 && ids.size() < n) {
        auto id = (*sched)->submit(std::move(requests[ids.size()]), [&](const SequenceEvent& e) {
          if (e.kind == SequenceEventKind::Token) got[e.id].push_back(e.token);
        });
        EXPECT_TRUE(id.ok()) << id.error().message;
        if (!id.ok()) return got;
        ids.push_back(*id);
      }
      auto rep = (*sched)->step();
      EXPECT_TRUE(rep.ok()) << rep.error().message;
      if (!rep.ok()) return got;
      ++totals.steps;
      totals.drafted += rep->drafted_tokens;
      totals.accepted += rep->accepted_tokens;
      if (rep->decode_tokens + rep->drafted_tokens > kVerifyRowsMax && rep->drafted_tokens > 0) {
        totals.rows_within_limit = false;
      }
      if (rep->prompt_tokens > 0 && rep->drafted_tokens > 0) totals.drafted_beside_prompt = true;
    }
    EXPECT_EQ((*sched)->active(), 0);
    EXPECT_EQ((*sched)->pool().free_blocks(), free_at_start);
    return got;
  }

  static constexpr int64_t kCtx = 192;
};

TEST_F(SchedulerSpeculationTest, NgramDraftsKeepEverySequenceOnItsSoloTokens) {
  constexpr int kSeqs = 3, kTokens = 96;
  std::vector<SequenceRequest> requests;
  for (int i = 0; i < kSeqs; ++i) {
    SequenceRequest r;
    r.prompt = prompt(i);
    r.sampler = greedy();
    r.max_tokens = kTokens;
    r.speculator = always_drafting(std::make_unique<NgramDrafter>(), 4);
    requests.push_back(std::move(r));
  }
  Totals totals;
  std::vector<SequenceId> ids;
  auto got = run(std::move(requests), totals, ids, kSeqs);
  ASSERT_EQ(ids.size(), static_cast<size_t>(kSeqs));
  for (int i = 0; i < kSeqs; ++i) {
    EXPECT_EQ(got[ids[static_cast<size_t>(i)]], solo(prompt(i), kTokens)) << "sequence " << i;
  }
  // The story model repeats itself, so n-gram drafts were made and some kept.
  EXPECT_GT(totals.drafted, 0);
  EXPECT_GT(totals.accepted, 0);
  EXPECT_TRUE(totals.rows_within_limit);
  EXPECT_FALSE(totals.drafted_beside_prompt);
  std::printf("n-gram drafts: %lld drafted, %lld accepted in %lld steps\n", static_cast<long long>(totals.drafted),
              static_cast<long long>(totals.accepted), static_cast<long long>(totals.steps));
}

TEST_F(SchedulerSpeculationTest, RejectedDraftsRollBackExactly) {
  constexpr int kSeqs = 2, kTokens = 48;
  std::vector<SequenceRequest> requests;
  for (int i = 0; i < kSeqs; ++i) {
    SequenceRequest r;
    r.prompt = prompt(i);
    r.sampler = greedy();
    r.max_tokens = kTokens;
    // Token 0 (<unk>) never follows in the story model's greedy reply.
    r.speculator = always_drafting(std::make_unique<WrongDrafter>(0), 3);
    requests.push_back(std::move(r));
  }
  Totals totals;
  std::vector<SequenceId> ids;
  auto got = run(std::move(requests), totals, ids, kSeqs);
  ASSERT_EQ(ids.size(), static_cast<size_t>(kSeqs));
  for (int i = 0; i < kSeqs; ++i) {
    EXPECT_EQ(got[ids[static_cast<size_t>(i)]], solo(prompt(i), kTokens)) << "sequence " << i;
  }
  EXPECT_GT(totals.drafted, 0);
  EXPECT_EQ(totals.accepted, 0);
}

// Eight sequences fill every few-token row with decode tokens: no step
// drafts while they all run, and the replies are still the solo ones.
TEST_F(SchedulerSpeculationTest, FullBatchLeavesNoRowsForDrafts) {
  constexpr int kSeqs = 8, kTokens = 32;
  std::vector<SequenceRequest> requests;
  for (int i = 0; i < kSeqs; ++i) {
    SequenceRequest r;
    r.prompt = prompt(i);
    r.sampler = greedy();
    r.max_tokens = kTokens;
    r.speculator = always_drafting(std::make_unique<NgramDrafter>(), 4);
    requests.push_back(std::move(r));
  }
  Totals totals;
  std::vector<SequenceId> ids;
  auto got = run(std::move(requests), totals, ids, kSeqs);
  ASSERT_EQ(ids.size(), static_cast<size_t>(kSeqs));
  for (int i = 0; i < kSeqs; ++i) {
    EXPECT_EQ(got[ids[static_cast<size_t>(i)]], solo(prompt(i), kTokens)) << "sequence " << i;
  }
  EXPECT_TRUE(totals.rows_within_limit);
  EXPECT_FALSE(totals.drafted_beside_prompt);
}

TEST_F(SchedulerSpeculationTest, ChosenTokensAreNeverDrafted) {
  SequenceRequest r;
  r.prompt = prompt(0);
  r.sampler = greedy();
  r.max_tokens = 24;
  r.speculator = always_drafting(std::make_unique<NgramDrafter>(), 4);
  int chosen = 0;
  r.choose = [&](std::span<const float> logits, sampling::Sampler& sampler) {
    ++chosen;
    return sampler.sample(logits);
  };
  std::vector<SequenceRequest> requests;
  requests.push_back(std::move(r));
  Totals totals;
  std::vector<SequenceId> ids;
  auto got = run(std::move(requests), totals, ids, 1);
  ASSERT_EQ(ids.size(), 1u);
  EXPECT_EQ(got[ids[0]], solo(prompt(0), 24));
  EXPECT_EQ(chosen, 24);
  EXPECT_EQ(totals.drafted, 0);
}

// A masked id (ignore_eos) is never drawn, in plain and in verified rows:
// the first token becomes the best of the others, as a row with that id at
// -inf gives it.
TEST_F(SchedulerSpeculationTest, MaskedTokensAreNeverDrawn) {
  const std::vector<int32_t> p = prompt(1);
  const std::vector<int32_t> plain = solo(p, 8);
  ASSERT_FALSE(plain.empty());
  std::vector<float> row = fresh_logits(p, kCtx, DType::F16);
  row[static_cast<size_t>(plain[0])] = -std::numeric_limits<float>::infinity();
  const auto best = static_cast<int32_t>(std::max_element(row.begin(), row.end()) - row.begin());
  SequenceRequest r;
  r.prompt = p;
  r.sampler = greedy();
  r.max_tokens = 24;
  r.masked_tokens = {plain[0]};
  r.speculator = always_drafting(std::make_unique<NgramDrafter>(), 4);
  std::vector<SequenceRequest> requests;
  requests.push_back(std::move(r));
  Totals totals;
  std::vector<SequenceId> ids;
  auto got = run(std::move(requests), totals, ids, 1);
  ASSERT_EQ(ids.size(), 1u);
  const auto& tokens = got[ids[0]];
  ASSERT_EQ(tokens.size(), 24u);
  EXPECT_EQ(tokens[0], best);
  EXPECT_EQ(std::count(tokens.begin(), tokens.end(), plain[0]), 0);
}

// The quantized fixture families (few-token kernels of Q4_0, Q8_0, the
// K-quants and MXFP4; sliding windows; routed experts): two drafting
// sequences give their solo greedy tokens.
class SchedulerSpeculationFixtures : public SchedulerSpeculationTest, public ::testing::WithParamInterface<const char*> {
 protected:
  void SetUp() override { load(std::string("models/") + GetParam()); }
};

TEST_P(SchedulerSpeculationFixtures, DraftingSequencesGiveTheirSoloTokens) {
  constexpr int kSeqs = 2, kTokens = 48;
  auto prompt_of = [&](int i) { return synthetic_tokens(12, 700u + static_cast<uint32_t>(i), n_vocab()); };
  std::vector<SequenceRequest> requests;
  for (int i = 0; i < kSeqs; ++i) {
    SequenceRequest r;
    r.prompt = prompt_of(i);
    r.sampler = greedy();
    r.max_tokens = kTokens;
    r.speculator = always_drafting(std::make_unique<ScriptDrafter>(r.prompt.size(), solo(r.prompt, kTokens), n_vocab()), 3);
    requests.push_back(std::move(r));
  }
  Totals totals;
  std::vector<SequenceId> ids;
  auto got = run(std::move(requests), totals, ids, kSeqs);
  ASSERT_EQ(ids.size(), static_cast<size_t>(kSeqs));
  for (int i = 0; i < kSeqs; ++i) {
    EXPECT_EQ(got[ids[static_cast<size_t>(i)]], solo(prompt_of(i), kTokens)) << "sequence " << i;
  }
  EXPECT_GT(totals.accepted, 0);
  EXPECT_LT(totals.accepted, totals.drafted);
  std::printf("%s: %lld drafted, %lld accepted\n", GetParam(), static_cast<long long>(totals.drafted),
              static_cast<long long>(totals.accepted));
}

INSTANTIATE_TEST_SUITE_P(Fixtures, SchedulerSpeculationFixtures,
                         ::testing::Values("tiny-llama-q4_0.gguf", "tiny-llama-q8_0.gguf", "tiny-gemma3-q4_k_m.gguf",
                                           "tiny-qwen3moe-q4_k_m.gguf", "tiny-gpt-oss-mxfp4_moe.gguf"),
                         [](const ::testing::TestParamInfo<const char*>& param_info) {
                           std::string name = param_info.param;
                           name = name.substr(0, name.find(".gguf"));
                           for (auto& c : name) {
                             if (c == '-') c = '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace hearth::runtime
