// The scoring arithmetic against direct double-precision computations, and
// the window cutting against the reference method's counts.
#include <gtest/gtest.h>
#include <hearth/engine/quality/greedy.h>
#include <hearth/engine/quality/kl_divergence.h>
#include <hearth/engine/quality/log_probs.h>
#include <hearth/engine/quality/segments.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace hearth::quality {
namespace {

std::vector<float> pseudo_logits(size_t n, uint32_t seed, float spread) {
  std::vector<float> v(n);
  uint32_t x = seed * 2654435761u + 7;
  for (auto& f : v) {
    x = x * 1664525u + 1013904223u;
    f = spread * (static_cast<float>(x >> 8) / static_cast<float>(1u << 24) - 0.5f);
  }
  return v;
}

std::vector<double> log_softmax(const std::vector<float>& l) {
  double m = *std::max_element(l.begin(), l.end()), s = 0;
  for (float v : l) s += std::exp(v - m);
  std::vector<double> out;
  for (float v : l) out.push_back(v - m - std::log(s));
  return out;
}

TEST(QualityLogProbs, TokenNllIsTheNegativeLogSoftmax) {
  const auto l = pseudo_logits(1000, 1, 30.0f);
  const auto ref = log_softmax(l);
  for (int32_t t : {0, 17, 999}) EXPECT_NEAR(token_nll(l, t), -ref[static_cast<size_t>(t)], 1e-5);
}

TEST(QualityLogProbs, QuantizedLogProbsStayWithinHalfAStep) {
  const auto l = pseudo_logits(4096, 2, 40.0f);  // wider than the 16-nat range
  const auto ref = log_softmax(l);
  const auto q = quantize_log_probs(l);
  const double top = *std::max_element(ref.begin(), ref.end());
  EXPECT_NEAR(q.scale, 16.0 / 65535.0, 1e-9);
  for (size_t i = 0; i < l.size(); ++i) {
    if (ref[i] >= top - 16.0) {
      EXPECT_NEAR(q.log_prob(static_cast<int32_t>(i)), ref[i], 0.5 * q.scale + 1e-5) << i;
    } else {
      EXPECT_EQ(q.q[i], 0) << i;  // below the range: read as its floor
    }
  }
}

TEST(QualityLogProbs, KlDivergenceMatchesTheDirectSum) {
  const auto base = pseudo_logits(2048, 3, 12.0f);
  auto model = base;
  for (size_t i = 0; i < model.size(); i += 3) model[i] += 0.25f;
  const auto lb = log_softmax(base), lm = log_softmax(model);
  double direct = 0;
  for (size_t i = 0; i < lb.size(); ++i) direct += std::exp(lb[i]) * (lb[i] - lm[i]);
  const auto p = kl_divergence(quantize_log_probs(base), model, 5);
  // The base's 16-bit rounding (at most 1.2e-4 nats per entry) bounds the gap.
  EXPECT_NEAR(p.kld, direct, 2.5e-4);
  EXPECT_GT(p.kld, 0.0);
  EXPECT_NEAR(p.nll, -lm[5], 1e-5);
  EXPECT_NEAR(p.nll_base, -lb[5], 1.3e-4);
  EXPECT_EQ(p.same_top, argmax(base) == argmax(model));
  // The same distribution diverges by no more than the rounding.
  EXPECT_NEAR(kl_divergence(quantize_log_probs(base), base, 0).kld, 0.0, 2.5e-4);
}

TEST(QualityLogProbs, TopOneFollowsTheArgmaxOfEach) {
  std::vector<float> base = {0.0f, 3.0f, 1.0f}, model = {0.0f, 1.0f, 3.0f};
  EXPECT_FALSE(kl_divergence(quantize_log_probs(base), model, 1).same_top);
  EXPECT_EQ(argmax(model), 2);
}

TEST(QualityLogProbs, PerplexityAndItsStandardError) {
  NllStats s;
  for (double v : {1.0, 2.0, 3.0, 4.0}) s.add(v);
  EXPECT_DOUBLE_EQ(s.ppl(), std::exp(2.5));
  // Population variance 1.25 over n - 1 = 3, times ppl.
  EXPECT_NEAR(s.ppl_sd(), std::sqrt(1.25 / 3.0) * std::exp(2.5), 1e-12);
}

TEST(QualityLogProbs, PercentileInterpolatesBetweenRanks) {
  const std::vector<float> v = {0.0f, 1.0f, 2.0f, 3.0f, 4.0f};
  EXPECT_FLOAT_EQ(static_cast<float>(percentile(v, 0.5f)), 2.0f);
  EXPECT_FLOAT_EQ(static_cast<float>(percentile(v, 0.99f)), 3.96f);
  EXPECT_FLOAT_EQ(static_cast<float>(percentile(v, 1.0f)), 4.0f);
}

TEST(QualityWindows, WindowsStartWithBosAndScoreTheirSecondHalf) {
  ScoredText text;
  text.bos = 1;
  for (int32_t i = 0; i < 1000; ++i) text.tokens.push_back(10 + i);
  auto w = text_windows(text, 128);
  ASSERT_TRUE(w.ok());
  ASSERT_EQ(w->size(), 7u);  // floor(1000 / 128); the rest is dropped
  for (size_t k = 0; k < w->size(); ++k) {
    const auto& s = (*w)[k];
    ASSERT_EQ(s.tokens.size(), 128u);
    EXPECT_EQ(s.tokens[0], 1);
    EXPECT_EQ(s.tokens[1], text.tokens[k * 128 + 1]);
    EXPECT_EQ(s.first, 64);
    EXPECT_EQ(s.scored(), 63);
  }
  text.bos.reset();
  EXPECT_EQ((*text_windows(text, 128))[1].tokens[0], text.tokens[128]);
}

TEST(QualityWindows, ATextShorterThanTwoContextsIsRefused) {
  ScoredText text;
  text.tokens.assign(255, 5);
  auto w = text_windows(text, 128);
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.error().message.find("255 tokens"), std::string::npos) << w.error().message;
}

TEST(QualityGreedy, CommonPrefixAndContinuationSegment) {
  const std::vector<int32_t> a = {1, 2, 3, 4}, b = {1, 2, 9}, prompt = {7, 8};
  EXPECT_EQ(common_prefix(a, b), 2);
  EXPECT_EQ(common_prefix(a, a), 4);
  const auto s = continuation_segment(prompt, a);
  EXPECT_EQ(s.tokens, (std::vector<int32_t>{7, 8, 1, 2, 3, 4}));
  EXPECT_EQ(s.first, 1);
  EXPECT_EQ(s.scored(), 4);
}

TEST(QualityBaseStore, RowsReadBackAsWritten) {
  auto store = BaseLogProbs::create(300);
  ASSERT_TRUE(store.ok());
  const auto r0 = quantize_log_probs(pseudo_logits(300, 4, 10.0f));
  const auto r1 = quantize_log_probs(pseudo_logits(300, 5, 10.0f));
  ASSERT_TRUE(store->append(r0).ok());
  ASSERT_TRUE(store->append(r1).ok());
  QuantizedLogProbs back;
  ASSERT_TRUE(store->read(1, back).ok());
  EXPECT_EQ(back.q, r1.q);
  EXPECT_EQ(back.floor, r1.floor);
  ASSERT_TRUE(store->read(0, back).ok());
  EXPECT_EQ(back.q, r0.q);
  EXPECT_FALSE(store->read(2, back).ok());
  EXPECT_FALSE(store->append(quantize_log_probs(pseudo_logits(299, 6, 1.0f))).ok());
}

}  // namespace
}  // namespace hearth::quality
