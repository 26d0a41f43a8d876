// The sampler chain against distributions worked out by hand.
#include <gtest/gtest.h>
#include <hearth/engine/sampling/sampler.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

namespace hearth::sampling {
namespace {

SamplerConfig plain(float temperature) {
  SamplerConfig c;
  c.temperature = temperature;
  c.top_k = 0;
  c.top_p = 1.0f;
  c.min_p = 0.0f;
  return c;
}

float p_of(const std::vector<Candidate>& d, int32_t token) {
  for (const auto& c : d) {
    if (c.token == token) return c.p;
  }
  return 0.0f;
}

TEST(Sampler, GreedyPicksTheArgMaxAndBreaksTiesByLowestId) {
  Sampler s(plain(0.0f));
  const std::vector<float> logits{0.5f, 2.0f, -1.0f, 2.0f};
  EXPECT_EQ(s.sample(logits), 1);
}

// softmax([1, 2, 3]) = e^i / (e + e^2 + e^3) = 0.0900306, 0.2447285, 0.6652410.
TEST(Sampler, TemperatureOneIsTheSoftmax) {
  Sampler s(plain(1.0f));
  const auto d = s.distribution(std::vector<float>{1, 2, 3});
  ASSERT_EQ(d.size(), 3u);
  EXPECT_NEAR(p_of(d, 0), 0.0900306f, 1e-6);
  EXPECT_NEAR(p_of(d, 1), 0.2447285f, 1e-6);
  EXPECT_NEAR(p_of(d, 2), 0.6652410f, 1e-6);
}

// T = 2: softmax([0.5, 1, 1.5]) = 1.648721, 2.718282, 4.481689 over 8.848692.
TEST(Sampler, TemperatureDividesTheLogits) {
  Sampler s(plain(2.0f));
  const auto d = s.distribution(std::vector<float>{1, 2, 3});
  EXPECT_NEAR(p_of(d, 0), 0.1863237f, 1e-6);
  EXPECT_NEAR(p_of(d, 1), 0.3071959f, 1e-6);
  EXPECT_NEAR(p_of(d, 2), 0.5064804f, 1e-6);
}

// Keeping {2, 3}: e^3 / (e^2 + e^3) = 0.7310586.
TEST(Sampler, TopKKeepsTheKLargest) {
  auto c = plain(1.0f);
  c.top_k = 2;
  const auto d = Sampler(c).distribution(std::vector<float>{1, 2, 3});
  ASSERT_EQ(d.size(), 2u);
  EXPECT_NEAR(p_of(d, 2), 0.7310586f, 1e-6);
  EXPECT_NEAR(p_of(d, 1), 0.2689414f, 1e-6);
}

// Cumulative 0.665 < 0.7, then 0.910 >= 0.7: two tokens survive.
TEST(Sampler, TopPKeepsTheSmallestSetReachingP) {
  auto c = plain(1.0f);
  c.top_p = 0.7f;
  const auto d = Sampler(c).distribution(std::vector<float>{1, 2, 3});
  ASSERT_EQ(d.size(), 2u);
  EXPECT_NEAR(p_of(d, 2), 0.7310586f, 1e-6);
  c.top_p = 0.6f;
  EXPECT_EQ(Sampler(c).distribution(std::vector<float>{1, 2, 3}).size(), 1u);
}

// Threshold 0.3 * 0.665 = 0.1996: 0.245 stays, 0.090 goes.
TEST(Sampler, MinPIsRelativeToTheMostLikelyToken) {
  auto c = plain(1.0f);
  c.min_p = 0.3f;
  const auto d = Sampler(c).distribution(std::vector<float>{1, 2, 3});
  ASSERT_EQ(d.size(), 2u);
  c.min_p = 0.4f;  // 0.266 > 0.245
  EXPECT_EQ(Sampler(c).distribution(std::vector<float>{1, 2, 3}).size(), 1u);
}

// Penalty 2 on tokens 0 and 2: logits [1, 2, 3] -> [0.5, 2, 1.5], and a
// negative logit is multiplied: -1 -> -2.
TEST(Sampler, RepetitionPenaltyDividesPositiveAndMultipliesNegativeLogits) {
  auto c = plain(1.0f);
  c.repeat_penalty = 2.0f;
  Sampler s(c);
  s.accept(0);
  s.accept(2);
  const auto d = s.distribution(std::vector<float>{1, 2, 3});
  const double z = std::exp(0.5) + std::exp(2.0) + std::exp(1.5);
  EXPECT_NEAR(p_of(d, 1), std::exp(2.0) / z, 1e-6);
  EXPECT_NEAR(p_of(d, 0), std::exp(0.5) / z, 1e-6);

  Sampler neg(c);
  neg.accept(0);
  const auto dn = neg.distribution(std::vector<float>{-1, 0});
  const double zn = std::exp(-2.0) + std::exp(0.0);
  EXPECT_NEAR(p_of(dn, 0), std::exp(-2.0) / zn, 1e-6);
}

// Token 1 seen twice: 2 - 2 * 0.5 (frequency) - 0.25 (presence) = 0.75.
TEST(Sampler, FrequencyAndPresencePenaltiesCountOccurrences) {
  auto c = plain(1.0f);
  c.frequency_penalty = 0.5f;
  c.presence_penalty = 0.25f;
  Sampler s(c);
  s.accept(1);
  s.accept(1);
  const auto d = s.distribution(std::vector<float>{1, 2, 3});
  const double z = std::exp(1.0) + std::exp(0.75) + std::exp(3.0);
  EXPECT_NEAR(p_of(d, 1), std::exp(0.75) / z, 1e-6);
}

TEST(Sampler, PenaltiesOnlySeeTheWindow) {
  auto c = plain(0.0f);
  c.repeat_penalty = 100.0f;
  c.penalty_window = 2;
  Sampler s(c);
  s.accept(0);  // falls out of the window
  s.accept(1);
  s.accept(1);
  EXPECT_EQ(s.sample(std::vector<float>{3, 2.9f}), 0);
}

TEST(Sampler, ASeedReproducesTheDrawsAndDrawsFollowTheDistribution) {
  auto c = plain(1.0f);
  c.seed = 1234;
  c.penalty_window = 0;
  Sampler a(c), b(c);
  const std::vector<float> logits{1, 2, 3};
  int counts[3] = {};
  const int n = 20000;
  for (int i = 0; i < n; ++i) {
    const int32_t t = a.sample(logits);
    ASSERT_EQ(t, b.sample(logits));
    ++counts[t];
  }
  // 4 standard deviations of a binomial with n = 20000 is below 0.015.
  EXPECT_NEAR(counts[0] / double(n), 0.0900306, 0.015);
  EXPECT_NEAR(counts[1] / double(n), 0.2447285, 0.015);
  EXPECT_NEAR(counts[2] / double(n), 0.6652410, 0.015);
  c.seed = 99;
  Sampler other(c);
  a.reset();
  int differ = 0;
  for (int i = 0; i < 50; ++i) differ += a.sample(logits) != other.sample(logits);
  EXPECT_GT(differ, 0);
}

}  // namespace
}  // namespace hearth::sampling

namespace hearth::sampling {
namespace {

// Random logits with many exact ties (values on a coarse grid), so the
// tie rule (lower token first) is exercised, not just the ordering.
std::vector<float> tied_logits(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> grid(-40, 40);
  std::vector<float> v(n);
  for (auto& x : v) x = static_cast<float>(grid(rng)) * 0.25f;
  return v;
}

TEST(Argmax, IsTheFirstLargestAsMaxElementFindsIt) {
  EXPECT_EQ(argmax({}), -1);
  for (size_t n : {size_t{1}, size_t{15}, size_t{16}, size_t{17}, size_t{1000}, size_t{151936}}) {
    for (uint32_t seed : {1u, 2u, 3u}) {
      auto v = tied_logits(n, seed);
      const auto ref = std::max_element(v.begin(), v.end()) - v.begin();
      EXPECT_EQ(argmax(v), ref) << n << " " << seed;
      // The largest value at the very end, past the 16-lane blocks.
      v.back() = 1000.0f;
      EXPECT_EQ(argmax(v), static_cast<int32_t>(n - 1));
    }
  }
  std::vector<float> with_nan{1.0f, std::nanf(""), 3.0f, 2.0f};
  EXPECT_EQ(argmax(with_nan), 2);
  std::vector<float> all_negative(40, -5.0f);
  all_negative[33] = -1.0f;
  EXPECT_EQ(argmax(all_negative), 33);
}

TEST(TopCandidates, EqualsSortingTheWholeVocabulary) {
  for (size_t n : {size_t{1}, size_t{17}, size_t{500}, size_t{32000}}) {
    const auto v = tied_logits(n, 11);
    std::vector<Candidate> all(n);
    for (size_t i = 0; i < n; ++i) all[i] = {static_cast<int32_t>(i), v[i], 0.0f};
    std::stable_sort(all.begin(), all.end(), [](const Candidate& a, const Candidate& b) { return a.logit > b.logit; });
    for (int32_t k : {0, 1, 5, 40, static_cast<int32_t>(n) - 1, static_cast<int32_t>(n), static_cast<int32_t>(n) + 5}) {
      if (k < 0) continue;
      const auto got = top_candidates(v, k);
      const size_t want = (k <= 0 || static_cast<size_t>(k) >= n) ? n : static_cast<size_t>(k);
      ASSERT_EQ(got.size(), want) << n << " k=" << k;
      for (size_t i = 0; i < want; ++i) {
        ASSERT_EQ(got[i].token, all[i].token) << n << " k=" << k << " i=" << i;
        ASSERT_EQ(got[i].logit, all[i].logit);
      }
    }
  }
}

}  // namespace
}  // namespace hearth::sampling
