#include <hearth/engine/quality/log_probs.h>

#include <algorithm>
#include <cmath>

namespace hearth::quality {
namespace {

// The float maximum and the double sum of expf(l - max): the same rounding
// the reference's figures carry.
struct Softmax {
  float max_logit;
  int32_t imax;
  double sum_exp;
};

Softmax softmax_sums(std::span<const float> logits) {
  Softmax s{logits[0], 0, 0.0};
  for (size_t i = 1; i < logits.size(); ++i) {
    if (logits[i] > s.max_logit) {
      s.max_logit = logits[i];
      s.imax = static_cast<int32_t>(i);
    }
  }
  for (const float l : logits) s.sum_exp += std::exp(l - s.max_logit);
  return s;
}

}  // namespace

double token_nll(std::span<const float> logits, int32_t target) {
  const Softmax s = softmax_sums(logits);
  const float shifted = logits[static_cast<size_t>(target)] - s.max_logit;
  return -(static_cast<double>(shifted) - std::log(s.sum_exp));
}

int32_t argmax(std::span<const float> logits) { return softmax_sums(logits).imax; }

QuantizedLogProbs quantize_log_probs(std::span<const float> logits) {
  const Softmax s = softmax_sums(logits);
  const float min_logit = std::max(*std::min_element(logits.begin(), logits.end()), s.max_logit - kLogProbRange);
  const float log_sum_exp = static_cast<float>(std::log(s.sum_exp));
  QuantizedLogProbs out;
  out.scale = (s.max_logit - min_logit) / 65535.0f;
  out.floor = min_logit - s.max_logit - log_sum_exp;
  out.q.assign(logits.size(), 0);
  if (out.scale > 0) {
    const float inv_scale = 1.0f / out.scale;
    for (size_t i = 0; i < logits.size(); ++i) {
      // Round to nearest, ties to even (the default rounding mode).
      if (logits[i] > min_logit) out.q[i] = static_cast<uint16_t>(std::lrint(inv_scale * (logits[i] - min_logit)));
    }
  }
  return out;
}

PositionKld kl_divergence(const QuantizedLogProbs& base, std::span<const float> logits, int32_t target) {
  const Softmax s = softmax_sums(logits);
  const float log_sum_exp = static_cast<float>(std::log(s.sum_exp));
  // log p_model(i) = logits[i] - log_norm
  const float log_norm = s.max_logit + log_sum_exp;
  PositionKld out;
  out.nll = static_cast<double>(log_norm - logits[static_cast<size_t>(target)]);
  out.nll_base = -static_cast<double>(base.log_prob(target));
  double sum = 0;
  int32_t imax_base = 0;
  float best_base = 0;
  for (size_t i = 0; i < logits.size(); ++i) {
    const float lp_base = base.log_prob(static_cast<int32_t>(i));
    if (i == 0 || lp_base > best_base) {
      best_base = lp_base;
      imax_base = static_cast<int32_t>(i);
    }
    if (lp_base > -kLogProbRange) sum += std::exp(lp_base) * (lp_base - logits[i] + log_norm);
  }
  out.kld = sum;
  out.same_top = imax_base == s.imax;
  return out;
}

double NllStats::ppl() const { return std::exp(mean()); }

double NllStats::ppl_sd() const {
  if (count < 2) return 0.0;
  const double m = mean();
  const double var = sum2 / static_cast<double>(count) - m * m;
  return var > 0 ? std::sqrt(var / static_cast<double>(count - 1)) * ppl() : 0.0;
}

double percentile(std::span<const float> sorted, float fraction) {
  if (sorted.empty()) return 0.0;
  if (fraction <= 0) return sorted.front();
  if (fraction >= 1) return sorted.back();
  float p = fraction * static_cast<float>(sorted.size() - 1);
  const auto ip = static_cast<size_t>(p);
  p -= static_cast<float>(ip);
  return (1 - p) * sorted[ip] + p * sorted[std::min(ip + 1, sorted.size() - 1)];
}

}  // namespace hearth::quality
