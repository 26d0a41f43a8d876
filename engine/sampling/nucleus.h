// The candidates of a top-p / min-p chain over a whole vocabulary (no
// top-k), without sorting the vocabulary for every token. Internal to
// hearth_sampling.
#pragma once

#include <hearth/engine/sampling/sampler.h>

#include <cstdint>
#include <span>
#include <vector>

namespace hearth::sampling::detail {

// The most likely tokens, sorted as top_candidates sorts them (decreasing
// logit, ties to the lower token), with their probabilities over the whole
// vocabulary at temperature 1, at least up to where top-p and min-p cut
// (as many as sorting every token and cutting would keep). w, block_sums,
// items and spare are the caller's buffers, kept between tokens.
std::vector<Candidate> nucleus_candidates(std::span<const float> logits, float top_p, float min_p,
                                          std::vector<float>& w, std::vector<double>& block_sums,
                                          std::vector<uint64_t>& items, std::vector<uint64_t>& spare);

}  // namespace hearth::sampling::detail
