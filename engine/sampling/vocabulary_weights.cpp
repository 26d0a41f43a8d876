// The whole vocabulary's softmax weights (vocabulary_weights.h).
#include "vocabulary_weights.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>

namespace hearth::sampling::detail {
namespace {

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

}  // namespace

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

}  // namespace hearth::sampling::detail
