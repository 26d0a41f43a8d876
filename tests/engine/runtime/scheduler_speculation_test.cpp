// Speculative decoding inside the continuous-batching scheduler (CPU
// backend, story model): sequences that draft (n-gram lookup, or a drafter
// that never agrees) emit exactly their solo greedy tokens; drafts only fill
// the rows a decode-only step leaves under kVerifyRowsMax; a sequence whose
// tokens are chosen by a callback (grammar, log-probabilities) never drafts.
#include <hearth/engine/runtime/scheduler.h>

#include <algorithm>
#include <limits>
#include <functional>
#include <map>

#include "runtime_fixture.h"
#include "sequence_batch.h"

namespace hearth::runtime {
namespace {

using namespace testing;
using hearth::testing::read_ids;

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
    return solo_greedy(*session(kCtx, DType::F16), prompt, max_tokens);
  }

  // Greedy requests for `prompts`, each with the speculator `make` gives it.
  using MakeSpeculator = std::function<std::shared_ptr<Speculator>(const std::vector<int32_t>& prompt)>;
  static std::vector<SequenceRequest> greedy_requests(const std::vector<std::vector<int32_t>>& prompts,
                                                      int32_t max_tokens, const MakeSpeculator& make) {
    std::vector<SequenceRequest> out;
    for (const auto& p : prompts) {
      SequenceRequest r;
      r.prompt = p;
      r.sampler = greedy();
      r.max_tokens = max_tokens;
      r.speculator = make(p);
      out.push_back(std::move(r));
    }
    return out;
  }

  // Runs `requests` (built from `prompts`) and holds every reply to its solo run.
  Totals expect_solo_replies(const std::vector<std::vector<int32_t>>& prompts, int32_t max_tokens,
                             std::vector<SequenceRequest> requests, int32_t parallel) {
    Totals totals;
    std::vector<SequenceId> ids;
    auto got = run(std::move(requests), totals, ids, parallel);
    EXPECT_EQ(ids.size(), prompts.size());
    for (size_t i = 0; i < ids.size() && i < prompts.size(); ++i) {
      EXPECT_EQ(got[ids[i]], solo(prompts[i], max_tokens)) << "sequence " << i;
    }
    return totals;
  }

  static std::shared_ptr<Speculator> ngram_drafts(const std::vector<int32_t>&) {
    return always_drafting(std::make_unique<NgramDrafter>(), 4);
  }

  // One request alone: its tokens and the step totals.
  struct OneRun {
    std::vector<int32_t> tokens;
    Totals totals;
  };
  OneRun run_one(std::vector<SequenceRequest> requests) {
    OneRun out;
    std::vector<SequenceId> ids;
    auto got = run(std::move(requests), out.totals, ids, 1);
    EXPECT_EQ(ids.size(), 1u);
    if (!ids.empty()) out.tokens = got[ids[0]];
    return out;
  }

  std::vector<std::vector<int32_t>> story_prompts(int n) {
    std::vector<std::vector<int32_t>> out;
    for (int i = 0; i < n; ++i) out.push_back(prompt(i));
    return out;
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
  const auto prompts = story_prompts(3);
  const Totals totals = expect_solo_replies(prompts, 96, greedy_requests(prompts, 96, ngram_drafts), 3);
  // The story model repeats itself, so n-gram drafts were made and some kept.
  EXPECT_GT(totals.drafted, 0);
  EXPECT_GT(totals.accepted, 0);
  EXPECT_TRUE(totals.rows_within_limit);
  EXPECT_FALSE(totals.drafted_beside_prompt);
  std::printf("n-gram drafts: %lld drafted, %lld accepted in %lld steps\n", static_cast<long long>(totals.drafted),
              static_cast<long long>(totals.accepted), static_cast<long long>(totals.steps));
}

TEST_F(SchedulerSpeculationTest, RejectedDraftsRollBackExactly) {
  const auto prompts = story_prompts(2);
  // Token 0 (<unk>) never follows in the story model's greedy reply.
  auto wrong = [](const std::vector<int32_t>&) { return always_drafting(std::make_unique<WrongDrafter>(0), 3); };
  const Totals totals = expect_solo_replies(prompts, 48, greedy_requests(prompts, 48, wrong), 2);
  EXPECT_GT(totals.drafted, 0);
  EXPECT_EQ(totals.accepted, 0);
}

// Eight sequences fill every few-token row with decode tokens: no step
// drafts while they all run, and the replies are still the solo ones.
TEST_F(SchedulerSpeculationTest, FullBatchLeavesNoRowsForDrafts) {
  const auto prompts = story_prompts(8);
  const Totals totals = expect_solo_replies(prompts, 32, greedy_requests(prompts, 32, ngram_drafts), 8);
  EXPECT_TRUE(totals.rows_within_limit);
  EXPECT_FALSE(totals.drafted_beside_prompt);
}

TEST_F(SchedulerSpeculationTest, ChosenTokensAreNeverDrafted) {
  auto requests = greedy_requests({prompt(0)}, 24, ngram_drafts);
  int chosen = 0;
  requests[0].choose = [&](std::span<const float> logits, sampling::Sampler& sampler) {
    ++chosen;
    return sampler.sample(logits);
  };
  const auto got = run_one(std::move(requests));
  EXPECT_EQ(got.tokens, solo(prompt(0), 24));
  EXPECT_EQ(chosen, 24);
  EXPECT_EQ(got.totals.drafted, 0);
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
  auto requests = greedy_requests({p}, 24, ngram_drafts);
  requests[0].masked_tokens = {plain[0]};
  const auto got = run_one(std::move(requests));
  const auto& tokens = got.tokens;
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
  constexpr int32_t kTokens = 48;
  std::vector<std::vector<int32_t>> prompts;
  for (uint32_t i = 0; i < 2; ++i) prompts.push_back(synthetic_tokens(12, 700u + i, n_vocab()));
  auto script = [&](const std::vector<int32_t>& p) {
    return always_drafting(std::make_unique<ScriptDrafter>(p.size(), solo(p, kTokens), n_vocab()), 3);
  };
  const Totals totals = expect_solo_replies(prompts, kTokens, greedy_requests(prompts, kTokens, script), 2);
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
