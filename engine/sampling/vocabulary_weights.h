// Softmax weights over a whole vocabulary, vectorized with GCC's portable
// vector types: what the sampler's whole-softmax draw and its top-p /
// min-p candidates (nucleus.h) share. Internal to hearth_sampling.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace hearth::sampling::detail {

inline constexpr size_t kWeightBlock = 64;  // tokens per partial sum of softmax_weights

// The largest logit, NaNs ignored (-inf when there is none).
float finite_max(std::span<const float> logits);

// Each token's unnormalized probability e^((l - max) / T) into w (0 for a
// NaN or -inf logit, and for one more than about 88 / T below the max), the
// sum of each block of kWeightBlock tokens into block_sums, and their total.
double softmax_weights(std::span<const float> logits, float max, float temperature, std::vector<float>& w,
                       std::vector<double>& block_sums);

}  // namespace hearth::sampling::detail
