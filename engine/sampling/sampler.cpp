#include "hearth/engine/sampling/sampler.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_map>

#include "nucleus.h"
#include "vocabulary_weights.h"

namespace hearth::sampling {

using detail::finite_max;
using detail::kWeightBlock;
using detail::nucleus_candidates;
using detail::softmax_weights;

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

bool Sampler::penalizes() const {
  const bool any = config_.repeat_penalty != 1.0f || config_.presence_penalty != 0.0f || config_.frequency_penalty != 0.0f;
  return any && !recent_.empty();
}

void Sampler::apply_penalties(std::vector<float>& logits) const {
  if (!penalizes()) return;
  std::unordered_map<int32_t, int> counts;
  for (int32_t t : recent_) ++counts[t];
  for (const auto& [token, count] : counts) {
    if (token < 0 || static_cast<size_t>(token) >= logits.size()) continue;
    float& l = logits[static_cast<size_t>(token)];
    if (config_.repeat_penalty != 1.0f) l = l > 0 ? l / config_.repeat_penalty : l * config_.repeat_penalty;
    l -= static_cast<float>(count) * config_.frequency_penalty + config_.presence_penalty;
  }
}

int32_t argmax(std::span<const float> values) {
  const size_t n = values.size();
  if (n == 0) return -1;
  // Pass 1: the largest value and the first block that holds it. Per block,
  // 16 running maxima the compiler keeps in vector registers (a branch-free
  // select, no index to carry); a block is kept only when its maximum beats
  // every earlier one's, so of equal maxima the first block's stays. NaNs
  // lose every comparison, except in values[0], which starts `best` (then
  // nothing beats it and no value equals it: the answer is 0).
  constexpr size_t kLanes = 16, kBlock = 1024;
  float best = values[0];
  size_t best_block = 0;
  for (size_t b = 0; b < n; b += kBlock) {
    const size_t end = std::min(n, b + kBlock);
    float lane[kLanes];
    for (float& l : lane) l = -std::numeric_limits<float>::infinity();
    size_t i = b;
    for (; i + kLanes <= end; i += kLanes) {
      for (size_t j = 0; j < kLanes; ++j) lane[j] = values[i + j] > lane[j] ? values[i + j] : lane[j];
    }
    float block_max = lane[0];
    for (float l : lane) block_max = l > block_max ? l : block_max;
    for (; i < end; ++i) block_max = values[i] > block_max ? values[i] : block_max;
    if (block_max > best) {
      best = block_max;
      best_block = b;
    }
  }
  // Pass 2: its first position, from the start of that block. A second
  // pass over the whole row had doubled the time: eight rows of a 152k
  // vocabulary (a batched decode step) took 0.6-0.8 ms, now 0.3-0.4 ms.
  for (size_t k = best_block; k < n; ++k) {
    if (values[k] == best) return static_cast<int32_t>(k);
  }
  return 0;  // values[0] is NaN
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

std::vector<Candidate> top_candidates(std::span<const float> logits, int32_t top_k) {
  auto better = [](const Candidate& a, const Candidate& b) {
    return a.logit > b.logit || (a.logit == b.logit && a.token < b.token);
  };
  const size_t n = logits.size();
  std::vector<Candidate> c;
  if (top_k <= 0 || static_cast<size_t>(top_k) >= n) {
    c.resize(n);
    for (size_t i = 0; i < n; ++i) c[i] = {static_cast<int32_t>(i), logits[i], 0.0f};
    std::sort(c.begin(), c.end(), better);
    return c;
  }
  // One pass with the k best so far in a heap whose front is the worst of
  // them: a logit replaces it only when strictly larger (an equal one comes
  // later, so it has the higher token and loses the tie). Blocks of 16 whose
  // largest value cannot enter are skipped after one vectorizable max.
  const auto k = static_cast<size_t>(top_k);
  c.reserve(k);
  for (size_t i = 0; i < k; ++i) c.push_back({static_cast<int32_t>(i), logits[i], 0.0f});
  std::make_heap(c.begin(), c.end(), better);
  constexpr size_t kBlock = 16;
  for (size_t i = k; i < n; i += kBlock) {
    const size_t end = std::min(n, i + kBlock);
    float block_max = logits[i];
    for (size_t j = i + 1; j < end; ++j) block_max = logits[j] > block_max ? logits[j] : block_max;
    if (!(block_max > c.front().logit)) continue;
    for (size_t j = i; j < end; ++j) {
      if (logits[j] > c.front().logit) {
        std::pop_heap(c.begin(), c.end(), better);
        c.back() = {static_cast<int32_t>(j), logits[j], 0.0f};
        std::push_heap(c.begin(), c.end(), better);
      }
    }
  }
  std::sort_heap(c.begin(), c.end(), better);
  return c;
}

std::span<const float> Sampler::after_penalties(std::span<const float> logits, std::vector<float>& copy) const {
  // A copy only when penalties change some logits: a vocabulary row is
  // 0.6 MB for a 152k vocabulary, and copying it into a fresh vector took
  // 110 us of every token, several times the greedy draw itself.
  if (!penalizes()) return logits;
  copy.assign(logits.begin(), logits.end());
  apply_penalties(copy);
  return copy;
}

std::vector<Candidate> Sampler::distribution(std::span<const float> logits) const {
  std::vector<Candidate> out;
  distribution_into(logits, out);
  return out;
}

void Sampler::distribution_into(std::span<const float> logits_in, std::vector<Candidate>& out) const {
  std::vector<float> penalized;
  const std::span<const float> logits = after_penalties(logits_in, penalized);
  if (config_.temperature <= 0.0f) {
    const int32_t best = argmax(logits);
    out.assign(1, Candidate{best, logits[static_cast<size_t>(best)], 1.0f});
    return;
  }
  if (keeps_every_token(logits.size())) {
    // Every token, in token order: the draws and the speculative rule need
    // no order, and sorting 152k candidates took 13 ms.
    const float max = finite_max(logits);
    if (max > -std::numeric_limits<float>::infinity()) {
      std::vector<float>& w = scratch_.weights;
      const double inv_sum = 1.0 / softmax_weights(logits, max, config_.temperature, w, scratch_.block_sums);
      out.resize(logits.size());
      for (size_t i = 0; i < logits.size(); ++i) {
        out[i] = {static_cast<int32_t>(i), logits[i], static_cast<float>(w[i] * inv_sum)};
      }
      return;
    }
  }
  // top-p and min-p look at the distribution before temperature, as in the
  // common sampler chains, so temperature only reshapes what survives.
  const bool whole_vocabulary = config_.top_k <= 0 || static_cast<size_t>(config_.top_k) >= logits.size();
  std::vector<Candidate> c;
  if (whole_vocabulary && (config_.top_p < 1.0f || config_.min_p > 0.0f)) {
    c = nucleus_candidates(logits, config_.top_p, config_.min_p, scratch_.weights, scratch_.block_sums,
                           scratch_.keys, scratch_.spare);
  } else {
    c = top_candidates(logits, config_.top_k);
    softmax(c, 1.0f);
  }
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
  out = std::move(c);
}

bool Sampler::keeps_every_token(size_t vocabulary) const {
  return config_.temperature > 0.0f && (config_.top_k <= 0 || static_cast<size_t>(config_.top_k) >= vocabulary) &&
         config_.top_p >= 1.0f && config_.min_p <= 0.0f;
}

int32_t Sampler::draw_whole(std::span<const float> logits_in) {
  std::vector<float> penalized;
  const std::span<const float> logits = after_penalties(logits_in, penalized);
  const float max = finite_max(logits);
  if (!(max > -std::numeric_limits<float>::infinity())) return draw(distribution(logits_in));  // no finite logit
  const double sum = softmax_weights(logits, max, config_.temperature, scratch_.weights, scratch_.block_sums);
  const std::vector<float>& weights = scratch_.weights;
  const std::vector<double>& block_sums = scratch_.block_sums;
  // The token where the running sum passes u x sum, in token order: the
  // same distribution as a draw over sorted candidates, without the sort.
  // Whole blocks are passed by the sums that made the total, so the block
  // where the target falls is exact; within it, rounding may leave the
  // running sum just under the target, and its last token with weight is
  // taken.
  const double target = rng_.uniform() * sum;
  double cum = 0;
  size_t block = 0;
  while (block + 1 < block_sums.size() && target >= cum + block_sums[block]) cum += block_sums[block++];
  const size_t end = std::min(weights.size(), (block + 1) * kWeightBlock);
  int32_t last = -1;
  for (size_t i = block * kWeightBlock; i < end; ++i) {
    if (weights[i] == 0.0f) continue;
    cum += weights[i];
    last = static_cast<int32_t>(i);
    if (target < cum) return last;
  }
  if (last >= 0) return last;
  return static_cast<int32_t>(argmax(logits));
}

int32_t Sampler::sample(std::span<const float> logits) {
  // The whole softmax needs no candidates: drawn in token order, it costs
  // one pass instead of sorting the vocabulary.
  const int32_t token = keeps_every_token(logits.size()) ? draw_whole(logits) : draw(distribution(logits));
  accept(token);
  return token;
}

}  // namespace hearth::sampling
