// The speculative acceptance rule against the target distribution, computed
// here independently of the sampler (a plain softmax over the kept logits):
// whatever the drafter's q, accepted drafts plus replacements must be
// distributed as the target's p.
#include <gtest/gtest.h>
#include <hearth/engine/sampling/sampler.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "chi_square.h"

namespace hearth::sampling {
namespace {

using testing::chi_square;

// softmax(logits / temperature) over the `keep` largest logits, zero elsewhere.
std::vector<double> target_probs(const std::vector<float>& logits, float temperature, size_t keep) {
  std::vector<size_t> order(logits.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return logits[a] > logits[b]; });
  std::vector<double> p(logits.size(), 0.0);
  double sum = 0;
  for (size_t i = 0; i < keep; ++i) {
    p[order[i]] = std::exp((logits[order[i]] - logits[order[0]]) / temperature);
    sum += p[order[i]];
  }
  for (double& x : p) x /= sum;
  return p;
}

// The drafter's distribution as candidates, and a draw from it with an
// independent generator.
std::vector<Candidate> as_candidates(const std::vector<double>& q) {
  std::vector<Candidate> c;
  for (size_t i = 0; i < q.size(); ++i) {
    if (q[i] > 0) c.push_back({static_cast<int32_t>(i), 0.0f, static_cast<float>(q[i])});
  }
  return c;
}

int32_t draw(const std::vector<double>& q, Rng& rng) {
  const double u = rng.uniform();
  double cum = 0;
  for (size_t i = 0; i < q.size(); ++i) {
    cum += q[i];
    if (u < cum) return static_cast<int32_t>(i);
  }
  return static_cast<int32_t>(q.size() - 1);
}

struct Case {
  const char* name;
  SamplerConfig config;
  size_t kept;  // tokens the chain keeps (top-k)
  std::vector<double> q;
};

SamplerConfig chain(float temperature, int32_t top_k) {
  SamplerConfig c;
  c.temperature = temperature;
  c.top_k = top_k;
  c.top_p = 1.0f;
  c.min_p = 0.0f;
  return c;
}

TEST(SpeculativeVerify, OutputFollowsTheTargetDistributionWhateverTheDraft) {
  const std::vector<float> logits = {1.2f, 0.3f, 2.0f, -0.5f, 1.9f, 0.0f, -1.0f, 0.8f};
  const std::vector<Case> cases = {
      {"q far from p", chain(1.0f, 0), logits.size(), {0.02, 0.40, 0.02, 0.30, 0.02, 0.10, 0.10, 0.04}},
      {"q close to p", chain(1.0f, 0), logits.size(), {0.14, 0.06, 0.30, 0.03, 0.27, 0.05, 0.02, 0.13}},
      {"q outside top-k", chain(0.7f, 4), 4, {0.25, 0.25, 0.10, 0.10, 0.10, 0.10, 0.05, 0.05}},
      {"point mass (n-gram)", chain(1.3f, 0), logits.size(), {0, 0, 0, 0, 1.0, 0, 0, 0}},
  };
  constexpr int kTrials = 40000;
  for (const auto& c : cases) {
    const auto p = target_probs(logits, c.config.temperature, c.kept);
    const auto q = as_candidates(c.q);
    const bool point_mass = q.size() == 1;
    std::vector<int64_t> counts(logits.size(), 0);
    int64_t accepted = 0;
    Rng draft_rng(12345);
    for (int trial = 0; trial < kTrials; ++trial) {
      SamplerConfig config = c.config;
      config.seed = static_cast<uint64_t>(trial);
      Sampler sampler(config);
      const int32_t d = draw(c.q, draft_rng);
      const auto v = sampler.verify(logits, d, point_mass ? std::span<const Candidate>() : std::span<const Candidate>(q));
      ASSERT_GE(v.token, 0);
      if (v.accepted) {
        ASSERT_EQ(v.token, d);
        ++accepted;
      }
      ++counts[static_cast<size_t>(v.token)];
    }
    for (size_t t = 0; t < p.size(); ++t) {
      if (p[t] == 0) {
        EXPECT_EQ(counts[t], 0) << c.name << ": token " << t << " is outside the chain's kept set";
      }
    }
    const auto fit = chi_square(counts, p);
    EXPECT_TRUE(fit.fits()) << c.name << ": chi-square " << fit.statistic << " > " << fit.critical << " (df "
                            << fit.degrees << ")";
    // The acceptance rate is sum_x min(p(x), q(x)) (the overlap of p and q).
    double overlap = 0;
    for (size_t t = 0; t < p.size(); ++t) overlap += std::min(p[t], c.q[t]);
    EXPECT_NEAR(static_cast<double>(accepted) / kTrials, overlap, 0.015) << c.name;
  }
}

TEST(SpeculativeVerify, GreedyAcceptsExactlyTheArgMaxAfterPenalties) {
  SamplerConfig config = chain(0.0f, 0);
  config.repeat_penalty = 4.0f;
  Sampler sampler(config);
  const std::vector<float> logits = {1.0f, 3.0f, 2.5f};
  EXPECT_TRUE(sampler.verify(logits, 1, {}).accepted);  // nothing seen yet: token 1 leads
  // Token 1 was remembered: its logit drops to 0.75, so 2 leads now.
  const auto v = sampler.verify(logits, 1, {});
  EXPECT_FALSE(v.accepted);
  EXPECT_EQ(v.token, 2);
}

TEST(SpeculativeVerify, AWrongDraftIsNeverKeptWhenTheTargetGivesItNoMass) {
  const std::vector<float> logits = {5.0f, 4.0f, -2.0f, 1.0f};
  for (uint64_t seed = 0; seed < 500; ++seed) {
    SamplerConfig config = chain(1.0f, 2);
    config.seed = seed;
    Sampler sampler(config);
    const auto v = sampler.verify(logits, 2, {});  // token 2 is outside the top 2
    EXPECT_FALSE(v.accepted);
    EXPECT_TRUE(v.token == 0 || v.token == 1) << v.token;
  }
}

}  // namespace
}  // namespace hearth::sampling
