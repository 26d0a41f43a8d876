// Per-position figures of a model's next-token distribution, computed the way
// the reference engine's perplexity tool computes them so that perplexity and
// KL divergence agree with its figures: the negative log-likelihood of the
// token that follows, the base model's log-probabilities quantized to 16 bits
// per vocabulary entry, and KL(base || model) against those.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace hearth::quality {

// Entries more than this far below the most likely token are stored as the
// floor of the quantized range; the KL sum skips base log-probabilities below
// minus this value (their probability is < 1.2e-7).
inline constexpr float kLogProbRange = 16.0f;

// -log p(target) under softmax(logits), with a float maximum and a double sum
// of exponentials as the reference does.
double token_nll(std::span<const float> logits, int32_t target);

// The index of the largest logit (the first one on ties).
int32_t argmax(std::span<const float> logits);

// A base distribution in 2 + n_vocab/2 words: log p(i) = scale * q[i] + floor,
// where q spans [max_logit - 16, max_logit] in 65535 steps (entries below the
// range read as the floor). The error is at most 16/65535/2 = 1.2e-4 nats per
// entry, so KL figures of a few 1e-4 (an 8-bit quantization) remain resolved;
// a top-k summary would drop the tail the KL sum is sensitive to.
struct QuantizedLogProbs {
  float scale = 0;
  float floor = 0;  // log-probability of q == 0
  std::vector<uint16_t> q;

  float log_prob(int32_t i) const { return scale * static_cast<float>(q[static_cast<size_t>(i)]) + floor; }
};

QuantizedLogProbs quantize_log_probs(std::span<const float> logits);

// One scored position of a model against the base's stored distribution.
struct PositionKld {
  double kld = 0;        // KL(base || model), over base entries above -16
  double nll = 0;        // -log p_model(target)
  double nll_base = 0;   // -log p_base(target), from the quantized base
  bool same_top = false; // argmax of the model == argmax of the base
};

PositionKld kl_divergence(const QuantizedLogProbs& base, std::span<const float> logits, int32_t target);

// Running sums of per-token negative log-likelihoods: perplexity exp(mean)
// and its standard error ppl * sqrt(var / (n - 1)), as the reference reports.
struct NllStats {
  double sum = 0;
  double sum2 = 0;
  int64_t count = 0;

  void add(double nll) {
    sum += nll;
    sum2 += nll * nll;
    ++count;
  }
  double mean() const { return count > 0 ? sum / static_cast<double>(count) : 0.0; }
  double ppl() const;
  double ppl_sd() const;
};

// Linear interpolation between the two nearest ranks of sorted `values`
// (fraction in [0, 1]), as the reference reports KLD percentiles.
double percentile(std::span<const float> sorted, float fraction);

}  // namespace hearth::quality
