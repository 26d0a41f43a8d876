#include "hearth/engine/sampling/sampler.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

namespace hearth::sampling {

uint64_t Rng::next() {
  uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

double Rng::uniform() { return static_cast<double>(next() >> 11) * (1.0 / 9007199254740992.0); }

Sampler::Sampler(const SamplerConfig& config) : config_(config), rng_(config.seed) {}

void Sampler::reset() {
  recent_.clear();
  rng_ = Rng(config_.seed);
}

void Sampler::accept(int32_t token) {
  if (config_.penalty_window <= 0) return;
  recent_.push_back(token);
  while (static_cast<int32_t>(recent_.size()) > config_.penalty_window) recent_.pop_front();
}

void Sampler::apply_penalties(std::vector<float>& logits) const {
  if (recent_.empty()) return;
  const bool any = config_.repeat_penalty != 1.0f || config_.presence_penalty != 0.0f || config_.frequency_penalty != 0.0f;
  if (!any) return;
  std::unordered_map<int32_t, int> counts;
  for (int32_t t : recent_) ++counts[t];
  for (const auto& [token, count] : counts) {
    if (token < 0 || static_cast<size_t>(token) >= logits.size()) continue;
    float& l = logits[static_cast<size_t>(token)];
    if (config_.repeat_penalty != 1.0f) l = l > 0 ? l / config_.repeat_penalty : l * config_.repeat_penalty;
    l -= static_cast<float>(count) * config_.frequency_penalty + config_.presence_penalty;
  }
}

namespace {

// Softmax over the candidates' logits, in place.
void softmax(std::vector<Candidate>& c, float temperature) {
  const float max = c.front().logit;
  double sum = 0;
  for (auto& x : c) {
    x.p = std::exp((x.logit - max) / temperature);
    sum += x.p;
  }
  for (auto& x : c) x.p = static_cast<float>(x.p / sum);
}

}  // namespace

std::vector<Candidate> Sampler::distribution(std::span<const float> logits_in) const {
  std::vector<float> logits(logits_in.begin(), logits_in.end());
  apply_penalties(logits);
  std::vector<Candidate> c(logits.size());
  for (size_t i = 0; i < logits.size(); ++i) c[i] = {static_cast<int32_t>(i), logits[i], 0.0f};
  auto by_logit = [](const Candidate& a, const Candidate& b) {
    return a.logit > b.logit || (a.logit == b.logit && a.token < b.token);
  };
  if (config_.temperature <= 0.0f) {
    auto best = std::min_element(c.begin(), c.end(), by_logit);
    return {Candidate{best->token, best->logit, 1.0f}};
  }
  if (config_.top_k > 0 && static_cast<size_t>(config_.top_k) < c.size()) {
    std::partial_sort(c.begin(), c.begin() + config_.top_k, c.end(), by_logit);
    c.resize(static_cast<size_t>(config_.top_k));
  } else {
    std::sort(c.begin(), c.end(), by_logit);
  }
  // top-p and min-p look at the distribution before temperature, as in the
  // common sampler chains, so temperature only reshapes what survives.
  softmax(c, 1.0f);
  if (config_.top_p < 1.0f) {
    double cum = 0;
    size_t keep = c.size();
    for (size_t i = 0; i < c.size(); ++i) {
      cum += c[i].p;
      if (cum >= config_.top_p) {
        keep = i + 1;
        break;
      }
    }
    c.resize(keep);
  }
  if (config_.min_p > 0.0f) {
    const float threshold = config_.min_p * c.front().p;
    size_t keep = 1;
    while (keep < c.size() && c[keep].p >= threshold) ++keep;
    c.resize(keep);
  }
  softmax(c, config_.temperature);
  return c;
}

int32_t Sampler::sample(std::span<const float> logits) {
  const auto dist = distribution(logits);
  int32_t token = dist.front().token;
  if (dist.size() > 1) {
    const double u = rng_.uniform();
    double cum = 0;
    token = dist.back().token;
    for (const auto& c : dist) {
      cum += c.p;
      if (u < cum) {
        token = c.token;
        break;
      }
    }
  }
  accept(token);
  return token;
}

}  // namespace hearth::sampling
