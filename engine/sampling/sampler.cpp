#include "hearth/engine/sampling/sampler.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
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

// Four floats at a time in GCC's portable vector types (SSE2 on baseline
// x86-64, NEON on ARM): the branch-free form the compiler would not
// vectorize from scalar code.
using F4 = float __attribute__((vector_size(16)));
using I4 = int32_t __attribute__((vector_size(16)));

// e^x for x <= 0, within a few ulp of std::exp: x = n ln2 + r with |r| <=
// ln2 / 2, a degree-6 polynomial for e^r, and 2^n put into the exponent
// bits. Below about -88 (and for -inf or NaN: a token a grammar rules out)
// the result is exactly 0, so such a token is never drawn.
inline F4 exp_nonpositive(F4 x) {
  x = x > -104.0f ? x : -104.0f;  // NaN compares false: it becomes -104 too
  // Round to nearest by adding and taking away 1.5 x 2^23.
  constexpr float kRound = 12582912.0f;
  const F4 n = (x * 1.44269504089f + kRound) - kRound;
  F4 r = x - n * 0.693145751953125f;
  r -= n * 1.428606765330187e-06f;
  F4 p = r * (1.0f / 720) + 1.0f / 120;
  p = p * r + 1.0f / 24;
  p = p * r + 1.0f / 6;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  const I4 biased = __builtin_convertvector(n, I4) + 127;
  const I4 bits = (biased > 0 ? biased : 0) << 23;  // 0: a zero scale
  F4 scale;
  std::memcpy(&scale, &bits, sizeof scale);
  return p * scale;
}

// The largest logit, NaNs ignored (-inf when there is none).
float finite_max(std::span<const float> logits) {
  constexpr float kNone = -std::numeric_limits<float>::infinity();
  F4 m = {kNone, kNone, kNone, kNone};
  size_t i = 0;
  for (; i + 4 <= logits.size(); i += 4) {
    F4 l;
    std::memcpy(&l, logits.data() + i, sizeof l);
    m = l > m ? l : m;
  }
  float best = std::max(std::max(m[0], m[1]), std::max(m[2], m[3]));
  for (; i < logits.size(); ++i) best = logits[i] > best ? logits[i] : best;
  return best;
}

constexpr size_t kWeightBlock = 64;  // tokens per partial sum of softmax_weights

// Each token's unnormalized probability e^((l - max) / T) into w (0 for a
// NaN or -inf logit), the sum of each block of kWeightBlock tokens into
// block_sums, and their total. Lane-wise float sums within a block (a
// running double sum per token was an ordered chain that kept the loop at
// a third of its speed).
double softmax_weights(std::span<const float> logits, float max, float temperature, std::vector<float>& w,
                       std::vector<double>& block_sums) {
  const size_t n = logits.size();
  w.resize(n + 4);  // room for a whole last vector
  block_sums.clear();
  const float inv_t = 1.0f / temperature;
  double total = 0;
  for (size_t b = 0; b < n; b += kWeightBlock) {
    const size_t end = std::min(n, b + kWeightBlock);
    F4 acc = {};
    for (size_t i = b; i < end; i += 4) {
      F4 l;
      if (i + 4 <= end) {
        std::memcpy(&l, logits.data() + i, sizeof l);
      } else {
        l = F4{} - std::numeric_limits<float>::infinity();  // past the end: weight 0
        for (size_t j = 0; i + j < end; ++j) l[j] = logits[i + j];
      }
      const F4 e = exp_nonpositive((l - max) * inv_t);
      std::memcpy(w.data() + i, &e, sizeof e);
      acc += e;
    }
    const double sum = static_cast<double>((acc[0] + acc[1]) + (acc[2] + acc[3]));
    block_sums.push_back(sum);
    total += sum;
  }
  w.resize(n);
  return total;
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

namespace {

// A key whose unsigned order is the order of decreasing logit: the float's
// bits made monotone (negatives' bits flipped, positives' sign set), then
// inverted. NaN gets the largest key, after every number; -0 is 0 (equal
// logits are ties).
uint32_t descending_key(float logit) {
  if (std::isnan(logit)) return std::numeric_limits<uint32_t>::max();
  if (logit == 0.0f) logit = 0.0f;
  uint32_t bits;
  std::memcpy(&bits, &logit, sizeof bits);
  const uint32_t ascending = bits & 0x80000000u ? ~bits : bits | 0x80000000u;
  return ~ascending;
}

// Tokens by their distance below the largest logit, in buckets of
// 1/kBucketsPerLogit (the last one holds everything further down and NaN):
// the tokens of buckets 0..b are a prefix of the sorted order.
constexpr int kCutBuckets = 1024;
constexpr float kBucketsPerLogit = 64.0f;
inline int cut_bucket(float logit, float max) {
  const float d = (max - logit) * kBucketsPerLogit;
  return d < static_cast<float>(kCutBuckets - 1) ? static_cast<int>(d) : kCutBuckets - 1;
}

// The last bucket a cut at top_p / min_p can need, with two buckets to
// spare for rounding; kCutBuckets - 1 when it may lie past the buckets or
// the buckets up to it hold most of the vocabulary (then selecting them
// first costs more than it saves: a flat distribution under top-p 0.9).
// The mass per bucket is summed in double from the weights (w of the
// largest logit is 1), as the caller sums the candidates' probabilities.
int last_cut_bucket(std::span<const float> logits, const std::vector<float>& w, float max, double sum, float top_p,
                    float min_p) {
  std::array<double, kCutBuckets> mass{};
  std::array<uint32_t, kCutBuckets> count{};
  for (size_t i = 0; i < logits.size(); ++i) {
    const auto b = static_cast<size_t>(cut_bucket(logits[i], max));
    mass[b] += w[i];
    ++count[b];
  }
  int last = 0;
  if (top_p < 1.0f) {
    const double need = static_cast<double>(top_p) * sum * (1.0 + 1e-4);
    double cum = 0;
    int b = 0;
    for (; b < kCutBuckets - 1; ++b) {
      cum += mass[static_cast<size_t>(b)];
      if (cum >= need) break;
    }
    last = b;
  }
  if (min_p > 0.0f) {
    // The first token below min_p x the first one's probability lies at
    // most -ln(min_p) below the largest logit.
    const double below = -std::log(static_cast<double>(min_p) * 0.999) * kBucketsPerLogit;
    last = std::max(last, below < kCutBuckets ? static_cast<int>(below) + 1 : kCutBuckets - 1);
  }
  last = std::min(kCutBuckets - 1, last + 2);
  size_t selected = 0;
  for (int b = 0; b <= last; ++b) selected += count[static_cast<size_t>(b)];
  return selected * 2 > logits.size() ? kCutBuckets - 1 : last;
}

// The tokens in the order top_candidates sorts them (decreasing logit,
// ties by lower token), with probability w / sum, up to where both cuts
// fall: the first token at which the running sum reaches top_p (when
// top_p < 1) and whose probability is below min_p x the first one's (when
// min_p > 0), that token included, so the caller's cuts fall inside. Only
// the tokens of cut buckets up to `last_bucket` are sorted (all of them at
// kCutBuckets - 1); empty when the cuts fall past those. A
// least-significant-digit radix sort of the keys in three passes of 11
// bits: each pass is stable and the tokens start in token order, so equal
// logits stay by token. std::sort of a 152k vocabulary took 12 ms.
std::vector<Candidate> sorted_by_logit(std::span<const float> logits, const std::vector<float>& w, float max,
                                       double sum, float top_p, float min_p, int last_bucket,
                                       std::vector<uint64_t>& items, std::vector<uint64_t>& spare) {
  constexpr int kBits = 11;
  constexpr uint32_t kBuckets = 1u << kBits;
  const bool every = last_bucket >= kCutBuckets - 1;
  items.clear();
  for (size_t i = 0; i < logits.size(); ++i) {
    if (every || cut_bucket(logits[i], max) <= last_bucket) {
      items.push_back(static_cast<uint64_t>(descending_key(logits[i])) << 32 | i);
    }
  }
  const size_t n = items.size();
  spare.resize(n);
  std::array<uint32_t, kBuckets> count;
  for (int shift = 32; shift < 64; shift += kBits) {
    count.fill(0);
    for (uint64_t x : items) ++count[(x >> shift) & (kBuckets - 1)];
    uint32_t at = 0;
    for (uint32_t& c : count) {
      const uint32_t here = c;
      c = at;
      at += here;
    }
    for (uint64_t x : items) spare[count[(x >> shift) & (kBuckets - 1)]++] = x;
    items.swap(spare);
  }
  // Where the cuts fall first, then the candidates in one allocation (a
  // growing vector copied and faulted in megabytes).
  const auto probability = [&](size_t i) { return static_cast<float>(w[static_cast<uint32_t>(items[i])] / sum); };
  const float first = n > 0 ? probability(0) : 0.0f;
  size_t keep = n;
  bool cut = false;
  double mass = 0;
  for (size_t i = 0; i < n; ++i) {
    const float p = probability(i);
    mass += p;
    const bool p_cut = top_p >= 1.0f || mass >= top_p;
    const bool min_cut = min_p <= 0.0f || p < min_p * first;
    if (p_cut && min_cut) {
      keep = i + 1;
      cut = true;
      break;
    }
  }
  if (!cut && !every) return {};
  std::vector<Candidate> c(keep);
  for (size_t i = 0; i < keep; ++i) {
    const auto token = static_cast<uint32_t>(items[i]);
    c[i] = {static_cast<int32_t>(token), logits[token], probability(i)};
  }
  return c;
}

// The most likely tokens, sorted as top_candidates sorts them, with their
// probabilities over the whole vocabulary at temperature 1, at least up to
// where top-p and min-p cut (as many as sorting every token and cutting
// would keep): the top 64, then 512 by a heap, and when the cut falls
// outside those, the tokens down to where a histogram of the mass puts the
// cut, sorted (sorted_by_logit); every token when that falls short.
// Sorting a 152k vocabulary with std::sort for every token (OpenAI's
// default request: top_p 1 or below, no top_k) took 13 ms, longer than a
// decode step; a flat distribution under top-p 0.9 went on through heaps of
// 4096 and 32768 before that sort (26 ms a token).
std::vector<Candidate> nucleus_candidates(std::span<const float> logits, float top_p, float min_p,
                                          std::vector<float>& w, std::vector<double>& block_sums,
                                          std::vector<uint64_t>& items, std::vector<uint64_t>& spare) {
  const float max = finite_max(logits);
  const double sum = softmax_weights(logits, max, 1.0f, w, block_sums);
  for (size_t k = 64; k <= 512 && k < logits.size(); k *= 8) {
    std::vector<Candidate> c = top_candidates(logits, static_cast<int32_t>(k));
    double mass = 0;
    for (auto& x : c) {
      x.p = static_cast<float>(w[static_cast<size_t>(x.token)] / sum);
      mass += x.p;
    }
    const bool p_cut = top_p >= 1.0f || mass >= top_p;
    const bool min_cut = min_p <= 0.0f || c.back().p < min_p * c.front().p;
    if (p_cut && min_cut) return c;
  }
  if (max > -std::numeric_limits<float>::infinity()) {
    const int last = last_cut_bucket(logits, w, max, sum, top_p, min_p);
    if (last < kCutBuckets - 1) {
      std::vector<Candidate> c = sorted_by_logit(logits, w, max, sum, top_p, min_p, last, items, spare);
      if (!c.empty()) return c;
    }
  }
  return sorted_by_logit(logits, w, max, sum, top_p, min_p, kCutBuckets - 1, items, spare);
}

}  // namespace

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
