// Perplexity of a model over scored segments (segments.h): exp of the mean
// negative log-likelihood of every scored token, with its standard error, as
// the reference engine's perplexity tool reports "PPL = x +/- y".
#pragma once

#include <hearth/core/result.h>
#include <hearth/engine/backend/backend.h>
#include <hearth/engine/model/model.h>
#include <hearth/engine/quality/segments.h>

#include <cstdint>
#include <functional>
#include <span>

namespace hearth::quality {

struct PerplexityResult {
  int64_t scored = 0;  // tokens whose likelihood entered the figure
  int32_t segments = 0;
  double ppl = 0;
  double ppl_sd = 0;
};

// Called with the logits (n_vocab) of every scored position in order: what
// a caller keeps besides the figure (the KL base records them).
using ScoredRowFn = std::function<Status(std::span<const float> logits)>;

Result<PerplexityResult> perplexity(const model::Model& model, backend::Backend& backend,
                                    std::span<const Segment> segments, const EvalOptions& options = {},
                                    const ScoredRowFn& on_row = {});

}  // namespace hearth::quality
