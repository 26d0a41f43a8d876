// The top-p / min-p candidates of a whole vocabulary without top-k
// (nucleus.h): heaps for small nuclei, then a histogram-bounded radix sort.
#include "nucleus.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>

#include "vocabulary_weights.h"

namespace hearth::sampling::detail {
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

}  // namespace

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

}  // namespace hearth::sampling::detail
