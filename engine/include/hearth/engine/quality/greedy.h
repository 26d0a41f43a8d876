// Greedy continuations of prompts, and how far a model follows the base's:
// the number of leading tokens of its own greedy continuation that equal
// the base's (a figure a user feels directly: the same answer, token for
// token, for how long).
#pragma once

#include <hearth/core/result.h>
#include <hearth/engine/backend/backend.h>
#include <hearth/engine/model/model.h>
#include <hearth/engine/quality/segments.h>

#include <cstdint>
#include <span>
#include <vector>

namespace hearth::quality {

// `n_tokens` argmax tokens after `prompt` (from an empty cache); no stop
// tokens, so every model is compared over the same length.
Result<std::vector<int32_t>> greedy_continuation(const model::Model& model, backend::Backend& backend,
                                                 std::span<const int32_t> prompt, int32_t n_tokens,
                                                 const EvalOptions& options = {});

// Leading tokens `a` and `b` share.
int64_t common_prefix(std::span<const int32_t> a, std::span<const int32_t> b);

// A prompt followed by the base's continuation, scored over the
// continuation: the KL divergence and perplexity of the prompts form.
Segment continuation_segment(std::span<const int32_t> prompt, std::span<const int32_t> continuation);

}  // namespace hearth::quality
