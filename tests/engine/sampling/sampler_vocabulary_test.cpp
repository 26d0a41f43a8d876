// The sampler over whole vocabularies, without top-k: the whole softmax drawn
// in token order, and top-p / min-p cut from a growing set of the most
// likely tokens. Checked against distributions computed here by sorting
// every token and normalizing in double, and by chi-square on the draws.
#include <gtest/gtest.h>
#include <hearth/engine/sampling/sampler.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "chi_square.h"

namespace hearth::sampling {
namespace {

SamplerConfig whole(float temperature, float top_p = 1.0f, float min_p = 0.0f) {
  SamplerConfig c;
  c.temperature = temperature;
  c.top_k = 0;
  c.top_p = top_p;
  c.min_p = min_p;
  c.penalty_window = 0;
  c.seed = 77;
  return c;
}

// A language model's shape: a few likely tokens over a long tail.
std::vector<float> peaked_logits(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> tail(0.0f, 2.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = tail(rng);
  for (size_t i = 0; i < 12; ++i) v[(i * 7919) % n] = 14.0f - static_cast<float>(i);
  return v;
}

struct Ref {
  int32_t token;
  double p;
};

// Every token sorted by decreasing logit (ties: lower token), softmax at
// temperature 1 in double, top-p then min-p, then the survivors' softmax
// at `temperature`.
std::vector<Ref> reference(const std::vector<float>& logits, float temperature, float top_p, float min_p) {
  std::vector<int32_t> order(logits.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int32_t>(i);
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return logits[a] > logits[b]; });
  const double max = logits[static_cast<size_t>(order[0])];
  double z = 0;
  for (float l : logits) z += std::exp(l - max);
  size_t keep = order.size();
  double cum = 0;
  for (size_t i = 0; i < order.size() && top_p < 1.0f; ++i) {
    cum += std::exp(logits[static_cast<size_t>(order[i])] - max) / z;
    if (cum >= top_p) {
      keep = i + 1;
      break;
    }
  }
  if (min_p > 0.0f) {
    const double threshold = min_p * (1.0 / z);
    size_t k = 1;
    while (k < keep && std::exp(logits[static_cast<size_t>(order[k])] - max) / z >= threshold) ++k;
    keep = k;
  }
  std::vector<Ref> out;
  double zt = 0;
  for (size_t i = 0; i < keep; ++i) zt += std::exp((logits[static_cast<size_t>(order[i])] - max) / temperature);
  for (size_t i = 0; i < keep; ++i) {
    const int32_t t = order[i];
    out.push_back({t, std::exp((logits[static_cast<size_t>(t)] - max) / temperature) / zt});
  }
  return out;
}

TEST(SamplerVocabulary, TopPAndMinPWithoutTopKKeepWhatSortingEveryTokenKeeps) {
  const auto logits = peaked_logits(151936, 3);
  struct Case {
    float top_p, min_p, temperature;
  };
  for (const Case c : {Case{0.9f, 0.0f, 1.0f}, Case{0.5f, 0.0f, 0.7f}, Case{1.0f, 0.05f, 1.0f}, Case{0.95f, 0.01f, 1.3f},
                       Case{0.99f, 0.0f, 1.0f}}) {
    const auto want = reference(logits, c.temperature, c.top_p, c.min_p);
    const auto got = Sampler(whole(c.temperature, c.top_p, c.min_p)).distribution(logits);
    ASSERT_EQ(got.size(), want.size()) << c.top_p << " " << c.min_p;
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_EQ(got[i].token, want[i].token) << i;
      EXPECT_NEAR(got[i].p, want[i].p, 1e-5 * want[i].p + 1e-9) << i;
    }
  }
}

// A flat distribution (a high-entropy step: the nucleus under top-p 0.9
// holds most of the vocabulary, past every heap) with logits on a grid of
// 1/8, so most tokens tie with thousands of others and the order within a
// tie (lower token first) decides where the cut falls.
TEST(SamplerVocabulary, AFlatDistributionWithTiesIsCutWhereSortingEveryTokenCutsIt) {
  std::mt19937 rng(11);
  std::normal_distribution<float> spread(0.0f, 0.6f);
  std::vector<float> logits(151936);
  for (auto& x : logits) x = std::round(spread(rng) * 8.0f) / 8.0f;
  struct Case {
    float top_p, min_p, temperature;
  };
  for (const Case c : {Case{0.9f, 0.0f, 1.0f}, Case{0.95f, 0.0f, 0.8f}, Case{1.0f, 0.3f, 1.0f}, Case{0.7f, 0.2f, 1.2f}}) {
    const auto want = reference(logits, c.temperature, c.top_p, c.min_p);
    const auto got = Sampler(whole(c.temperature, c.top_p, c.min_p)).distribution(logits);
    ASSERT_EQ(got.size(), want.size()) << c.top_p << " " << c.min_p;
    ASSERT_GT(want.size(), 512u);  // past the heaps
    for (size_t i = 0; i < want.size(); ++i) {
      ASSERT_EQ(got[i].token, want[i].token) << i;
      EXPECT_NEAR(got[i].p, want[i].p, 1e-5 * want[i].p + 1e-9) << i;
    }
  }
}

// 600 tied tokens well above the rest: min-p 0.05 keeps exactly them, and
// its cut lies at the first token far below (past where the mass
// histogram looks), so the sampler must go on to sort every token.
TEST(SamplerVocabulary, AMinPCutPastAGapIsFoundBySortingEveryToken) {
  std::vector<float> logits(151936, 0.0f);
  for (size_t i = 0; i < 600; ++i) logits[(i * 7919) % logits.size()] = 10.0f;
  const auto want = reference(logits, 1.0f, 1.0f, 0.05f);
  const auto got = Sampler(whole(1.0f, 1.0f, 0.05f)).distribution(logits);
  ASSERT_EQ(want.size(), 600u);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_EQ(got[i].token, want[i].token) << i;
    EXPECT_NEAR(got[i].p, want[i].p, 1e-5 * want[i].p) << i;
  }
}

TEST(SamplerVocabulary, AChainKeepingEveryTokenListsThemInTokenOrder) {
  const auto logits = peaked_logits(151936, 4);
  const auto want = reference(logits, 0.8f, 1.0f, 0.0f);
  std::vector<double> p(logits.size(), 0.0);
  for (const auto& r : want) p[static_cast<size_t>(r.token)] = r.p;
  const auto got = Sampler(whole(0.8f)).distribution(logits);
  ASSERT_EQ(got.size(), logits.size());
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i].token, static_cast<int32_t>(i));
    ASSERT_NEAR(got[i].p, p[i], 1e-5 * p[i] + 1e-12) << i;
  }
}

TEST(SamplerVocabulary, TheWholeSoftmaxIsDrawnWithItsProbabilities) {
  // 40 likely tokens spread over a 5000-token vocabulary; the rest merge
  // into the chi-square's last cells.
  const size_t n = 5000;
  std::vector<float> logits(n, -30.0f);
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(-2.0f, 3.0f);
  for (size_t i = 0; i < 40; ++i) logits[(i * 127 + 3) % n] = u(rng);
  for (float temperature : {1.0f, 0.6f}) {
    const auto ref = reference(logits, temperature, 1.0f, 0.0f);
    std::vector<double> probs(n, 0.0);
    for (const auto& r : ref) probs[static_cast<size_t>(r.token)] = r.p;
    Sampler s(whole(temperature));
    std::vector<int64_t> counts(n, 0);
    for (int i = 0; i < 40000; ++i) ++counts[static_cast<size_t>(s.sample(logits))];
    const auto fit = testing::chi_square(counts, probs);
    EXPECT_TRUE(fit.fits()) << "T " << temperature << ": chi-square " << fit.statistic << " > " << fit.critical;
  }
}

TEST(SamplerVocabulary, ATokenWithNoMassIsNeverDrawn) {
  // A grammar's mask (-inf) and NaN logits: never drawn, whatever the
  // generator gives; every other token has mass.
  std::vector<float> logits(1000, std::numeric_limits<float>::quiet_NaN());
  for (size_t i = 0; i < logits.size(); i += 3) logits[i] = -std::numeric_limits<float>::infinity();
  logits[500] = 1.0f;
  logits[998] = 1.5f;
  Sampler s(whole(1.0f));
  int seen[2] = {};
  for (int i = 0; i < 2000; ++i) {
    const int32_t t = s.sample(logits);
    ASSERT_TRUE(t == 500 || t == 998) << t;
    ++seen[t == 998];
  }
  EXPECT_GT(seen[0], 0);
  EXPECT_GT(seen[1], seen[0]);
}

TEST(SamplerVocabulary, ASeedReproducesWholeSoftmaxDraws) {
  const auto logits = peaked_logits(151936, 9);
  Sampler a(whole(1.0f)), b(whole(1.0f));
  for (int i = 0; i < 200; ++i) ASSERT_EQ(a.sample(logits), b.sample(logits));
}

}  // namespace
}  // namespace hearth::sampling
