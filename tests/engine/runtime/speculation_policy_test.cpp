// The adaptive policy of speculative decoding (draft length, switch-off and
// re-probe) fed with step timings, and the n-gram drafter's proposals.
#include <gtest/gtest.h>
#include <hearth/engine/runtime/speculation.h>

namespace hearth::runtime {
namespace {

SpeculationConfig adaptive(int32_t max) {
  SpeculationConfig c;
  c.draft_max = max;
  return c;
}

TEST(SpeculationPolicy, MeasuresPlainDecodingFirstThenSpeculates) {
  Speculator s(std::make_unique<NgramDrafter>(), adaptive(8));
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(s.draft_length(), 0) << "step " << i << " measures the plain speed";
    s.on_plain_step(10.0);
  }
  EXPECT_EQ(s.draft_length(), 4);
}

TEST(SpeculationPolicy, DraftLengthFollowsAcceptance) {
  Speculator s(std::make_unique<NgramDrafter>(), adaptive(6));
  for (int i = 0; i < 4; ++i) s.on_plain_step(10.0);
  s.on_verify(4, 4, 0.5, 11.0);  // all kept: one more
  EXPECT_EQ(s.draft_length(), 5);
  s.on_verify(5, 5, 0.5, 11.0);
  s.on_verify(6, 6, 0.5, 11.0);
  EXPECT_EQ(s.draft_length(), 6) << "capped at draft_max";
  s.on_verify(6, 2, 0.5, 11.0);  // two kept: three next
  EXPECT_EQ(s.draft_length(), 3);
  EXPECT_FALSE(s.switched_off()) << "3.5 tokens per 11.5 ms beat 1 per 10 ms";
  EXPECT_EQ(s.figures().drafted, 21);
  EXPECT_EQ(s.figures().accepted, 17);
  EXPECT_EQ(s.figures().emitted, 21);
}

TEST(SpeculationPolicy, ADrafterThatNeverAgreesIsSwitchedOffAndProbedAgainLessOften) {
  Speculator s(std::make_unique<NgramDrafter>(), adaptive(8));
  for (int i = 0; i < 4; ++i) s.on_plain_step(10.0);
  for (int i = 0; i < 2; ++i) {
    ASSERT_GT(s.draft_length(), 0) << "pass " << i << " of the probe";
    s.on_verify(s.draft_length(), 0, 1.0, 12.0);  // one token per 13 ms
  }
  EXPECT_TRUE(s.switched_off()) << "judged after two passes";
  EXPECT_EQ(s.figures().switch_offs, 1);
  EXPECT_EQ(s.draft_length(), 0);
  int plain = 0;
  while (s.draft_length() == 0 && plain < 1000) {
    s.on_plain_step(10.0);
    ++plain;
  }
  EXPECT_EQ(plain, 64) << "the first back-off";
  EXPECT_EQ(s.draft_length(), 1) << "the length the rejections left";
  for (int i = 0; i < 2; ++i) s.on_verify(s.draft_length(), 0, 1.0, 12.0);
  plain = 0;
  while (s.draft_length() == 0 && plain < 1000) {
    s.on_plain_step(10.0);
    ++plain;
  }
  EXPECT_EQ(plain, 128) << "losing again doubles the back-off";
  EXPECT_EQ(s.figures().switch_offs, 2);
}

// A draft model nearly as slow as the target: each probe costs far more
// than a cheap lookup's, so it is probed less often, its extra time spread
// over enough plain tokens to stay within probe_share (2%) of them.
TEST(SpeculationPolicy, AnExpensiveProbeIsSpreadOverALongerBackOff) {
  Speculator s(std::make_unique<NgramDrafter>(), adaptive(8));
  for (int i = 0; i < 4; ++i) s.on_plain_step(20.0);
  const auto probe = [&] {
    ASSERT_EQ(s.draft_length() > 0, true);
    s.on_verify(s.draft_length(), 0, 15.0 * s.draft_length(), 25.0);
    s.on_verify(s.draft_length(), 0, 15.0 * s.draft_length(), 21.0);
  };
  const auto backed_off = [&] {
    int plain = 0;
    while (s.draft_length() == 0 && plain < 5000) {
      s.on_plain_step(20.0);
      ++plain;
    }
    return plain;
  };
  probe();  // drafts 4 then 1: 60 + 25 + 15 + 21 = 121 ms for 2 tokens, 81 ms beyond plain decoding
  ASSERT_TRUE(s.switched_off());
  EXPECT_EQ(backed_off(), 203) << "81 ms over 2% of 20 ms per token: 202.5 tokens, more than the first 64";
  probe();  // drafts 1 then 1: 36 + 36 = 72 ms, 32 ms extra (80 tokens), below the doubled back-off
  EXPECT_EQ(backed_off(), 406) << "losing again doubles the back-off";
  EXPECT_EQ(s.figures().switch_offs, 2);
}

TEST(SpeculationPolicy, DraftsFitTheEightRowsOfTheOneTokenKernels) {
  SpeculationConfig c;
  c.draft_max = 12;
  c.adaptive = false;
  Speculator s(std::make_unique<NgramDrafter>(), c);
  EXPECT_EQ(s.draft_length(), kMaxDraftTokens);
  EXPECT_EQ(kMaxDraftTokens + 1, 8) << "a verify pass: the sampled token and the drafts";
}

TEST(SpeculationPolicy, FixedModeAlwaysDraftsTheMaximum) {
  SpeculationConfig c;
  c.draft_max = 5;
  c.adaptive = false;
  Speculator s(std::make_unique<NgramDrafter>(), c);
  EXPECT_EQ(s.draft_length(), 5);
  for (int i = 0; i < 10; ++i) s.on_verify(5, 0, 1.0, 50.0);
  EXPECT_EQ(s.draft_length(), 5);
  EXPECT_FALSE(s.switched_off());
}

TEST(SpeculationPolicy, SpeedUpIsSpeculativeOverPlainTokensPerSecond) {
  Speculator s(std::make_unique<NgramDrafter>(), adaptive(8));
  for (int i = 0; i < 4; ++i) s.on_plain_step(10.0);  // 100 tok/s
  s.on_verify(4, 3, 2.0, 18.0);                       // 4 tokens in 20 ms: 200 tok/s
  EXPECT_DOUBLE_EQ(s.figures().plain_tps(), 100.0);
  EXPECT_DOUBLE_EQ(s.figures().spec_tps(), 200.0);
  EXPECT_DOUBLE_EQ(s.figures().speedup(), 2.0);
  EXPECT_DOUBLE_EQ(s.figures().acceptance_rate(), 0.75);
}

TEST(SpeculationMode, ParsesTheCliWords) {
  EXPECT_EQ(*parse_spec_mode("off"), SpecMode::Off);
  EXPECT_EQ(*parse_spec_mode("ngram"), SpecMode::Ngram);
  EXPECT_EQ(*parse_spec_mode("draft"), SpecMode::Draft);
  auto bad = parse_spec_mode("fast");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("fast"), std::string::npos);
}

std::vector<int32_t> propose(NgramDrafter& d, const std::vector<int32_t>& context, int32_t max) {
  auto r = d.propose(context, max, {});
  EXPECT_TRUE(r.ok());
  EXPECT_TRUE(r->q.empty()) << "n-gram proposals are deterministic";
  return r.ok() ? r->tokens : std::vector<int32_t>{};
}

TEST(NgramDrafter, ProposesWhatFollowedTheLatestEarlierOccurrence) {
  NgramDrafter d;
  // "7 8" occurred twice before; the latest is followed by 3 4 5.
  const std::vector<int32_t> ctx = {7, 8, 1, 2, 9, 7, 8, 3, 4, 5, 6, 7, 8};
  EXPECT_EQ(propose(d, ctx, 3), (std::vector<int32_t>{3, 4, 5}));
  EXPECT_EQ(propose(d, ctx, 10), (std::vector<int32_t>{3, 4, 5, 6, 7, 8})) << "up to the end of the context";
}

TEST(NgramDrafter, PrefersTheLongestMatch) {
  NgramDrafter d;
  // The 2-gram "5 6" last led to 1; the 3-gram "4 5 6" led to 2.
  const std::vector<int32_t> ctx = {4, 5, 6, 2, 9, 5, 6, 1, 0, 4, 5, 6};
  EXPECT_EQ(propose(d, ctx, 1), (std::vector<int32_t>{2}));
}

TEST(NgramDrafter, ProposesNothingWithoutAMatch) {
  NgramDrafter d;
  EXPECT_TRUE(propose(d, {1, 2, 3, 4, 5, 6}, 4).empty());
  EXPECT_TRUE(propose(d, {1}, 4).empty());
  EXPECT_TRUE(propose(d, {1, 2, 1, 2}, 0).empty());
}

TEST(NgramDrafter, FollowsARewoundContext) {
  NgramDrafter d;
  EXPECT_EQ(propose(d, {1, 2, 3, 9, 1, 2}, 1), (std::vector<int32_t>{3}));
  // The context was edited (an earlier message changed): the old index must
  // not propose 3 after "1 2" any more.
  EXPECT_EQ(propose(d, {1, 2, 4, 9, 1, 2}, 1), (std::vector<int32_t>{4}));
  // And grows again from there.
  EXPECT_EQ(propose(d, {1, 2, 4, 9, 1, 2, 4, 9, 8, 1, 2}, 2), (std::vector<int32_t>{4, 9}));
}

}  // namespace
}  // namespace hearth::runtime
