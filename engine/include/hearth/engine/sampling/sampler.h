// The sampler chain: penalties over a window of recent tokens, then top-k,
// top-p, min-p, temperature, and a draw from a seeded generator (so a seed
// reproduces a reply exactly). Temperature <= 0 is greedy.
#pragma once

#include <cstdint>
#include <deque>
#include <span>
#include <vector>

namespace hearth::sampling {

struct SamplerConfig {
  float temperature = 0.8f;       // <= 0: greedy (arg-max after penalties)
  int32_t top_k = 40;             // <= 0: off
  float top_p = 0.95f;            // >= 1: off
  float min_p = 0.05f;            // <= 0: off; keeps tokens with p >= min_p * p_max
  float repeat_penalty = 1.0f;    // 1: off; divides positive logits, multiplies negative ones
  float presence_penalty = 0.0f;  // subtracted once from every token seen in the window
  float frequency_penalty = 0.0f; // subtracted per occurrence in the window
  int32_t penalty_window = 64;    // recent tokens the penalties look at
  uint64_t seed = 0;

  friend bool operator==(const SamplerConfig&, const SamplerConfig&) = default;
};

// Index of the largest value, the first of equal ones (-1 when empty; NaNs
// never win). Greedy decoding calls it once per token over the whole
// vocabulary, so it is written to vectorize: std::max_element took ~0.5 ms
// over 152k logits, ~6 % of a token on a 0.5B model.
int32_t argmax(std::span<const float> values);

struct Candidate {
  int32_t token;
  float logit;
  float p;
};

// A small, fully specified generator (splitmix64), so a seed gives the same
// draws on every platform and standard library.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t next();
  double uniform();  // [0, 1)

 private:
  uint64_t state_;
};

// The `top_k` largest logits (all of them when top_k <= 0 or >= size) as
// candidates, by decreasing logit, ties to the lower token; p left 0. One
// pass with a heap of k instead of sorting the vocabulary.
std::vector<Candidate> top_candidates(std::span<const float> logits, int32_t top_k);

class Sampler {
 public:
  explicit Sampler(const SamplerConfig& config);

  // Picks the next token from `logits` (n_vocab) and remembers it for the penalties.
  int32_t sample(std::span<const float> logits);
  // Records a token that was not sampled (the prompt) for the penalties.
  void accept(int32_t token);
  // Forgets the penalty window and records the last tokens of `history`
  // instead (a drafter's sampler follows the target's context); the
  // generator's state is kept.
  void set_history(std::span<const int32_t> history);

  // Speculative decoding's acceptance rule for one drafted token, so the
  // output follows this chain's distribution p whatever the drafter's q:
  // greedy accepts when the arg-max is the draft; sampling accepts with
  // probability min(1, p(draft) / q(draft)) and otherwise draws from the
  // normalized max(0, p - q). `q` is the drafter's distribution at this
  // position after the same chain (empty: the draft was proposed
  // deterministically, q is a point mass on it). The token returned (the
  // draft, or its replacement) is remembered for the penalties.
  struct Verdict {
    bool accepted = false;
    int32_t token = -1;
  };
  Verdict verify(std::span<const float> logits, int32_t draft, std::span<const Candidate> q);
  // One draw from `dist` (probabilities summing to 1) with this sampler's
  // generator; a drafter samples its proposals with it.
  int32_t draw(std::span<const Candidate> dist);
  void reset();

  // The distribution the draw uses (after the whole chain), sorted by
  // decreasing probability, except for a chain that keeps every token
  // (no top-k, top-p or min-p cut): then every token in token order.
  std::vector<Candidate> distribution(std::span<const float> logits) const;
  // The same into `out`, whose storage is reused (a whole vocabulary's
  // list is megabytes).
  void distribution_into(std::span<const float> logits, std::vector<Candidate>& out) const;

  const SamplerConfig& config() const { return config_; }

 private:
  // Whether apply_penalties would change anything (a penalty is set and a
  // token was seen).
  bool penalizes() const;
  // Whether the chain keeps the whole vocabulary (no top-k, top-p or min-p
  // cut, temperature above 0): sample() then draws without candidates.
  bool keeps_every_token(size_t vocabulary) const;
  // One draw from the whole softmax at the temperature, after penalties.
  int32_t draw_whole(std::span<const float> logits);
  // verify's draw from the normalized residual max(0, p - q): q listed in
  // p's token order (both every token in token order), or q by token.
  int32_t draw_residual(std::span<const Candidate> p, std::span<const Candidate> q);
  int32_t draw_residual(std::span<const Candidate> p, std::span<const double> q_of);
  void apply_penalties(std::vector<float>& logits) const;
  // `logits`, or (when penalties apply) `copy` filled with them penalized.
  std::span<const float> after_penalties(std::span<const float> logits, std::vector<float>& copy) const;

  SamplerConfig config_;
  Rng rng_;
  std::deque<int32_t> recent_;
  // Buffers of the whole-vocabulary paths, kept between tokens: for a 152k
  // vocabulary they are megabytes, and fresh ones cost their page faults
  // and zeroing on every token. distribution() is const to its caller (it
  // changes no draw state) and reuses them, so one Sampler serves one thread
  // at a time (each sequence has its own).
  struct Scratch {
    std::vector<float> weights;       // per-token softmax weights
    std::vector<double> block_sums;   // their sums per block of tokens
    std::vector<uint64_t> keys, spare;  // the radix sort's items
    std::vector<Candidate> p, residual;  // verify's target distribution and residual
    std::vector<double> q_of;            // verify's drafter distribution by token
  };
  mutable Scratch scratch_;
};

}  // namespace hearth::sampling
