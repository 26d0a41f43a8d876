#include <hearth/engine/quality/log_probs.h>
#include <hearth/engine/quality/perplexity.h>

namespace hearth::quality {

Result<PerplexityResult> perplexity(const model::Model& model, backend::Backend& backend,
                                    std::span<const Segment> segments, const EvalOptions& options,
                                    const ScoredRowFn& on_row) {
  HEARTH_TRY(auto eval, SegmentEvaluator::create(model, backend, max_segment_tokens(segments), options));
  const auto n_vocab = static_cast<size_t>(eval.n_vocab());
  NllStats stats;
  std::vector<float> logits;
  for (const auto& segment : segments) {
    HEARTH_CHECK(eval.evaluate(segment, logits));
    for (int64_t r = 0; r < segment.scored(); ++r) {
      const auto pos = static_cast<size_t>(segment.first + r);
      const auto row = std::span<const float>(logits).subspan(static_cast<size_t>(r) * n_vocab, n_vocab);
      stats.add(token_nll(row, segment.tokens[pos + 1]));
      if (on_row) HEARTH_CHECK(on_row(row));
    }
  }
  PerplexityResult out;
  out.scored = stats.count;
  out.segments = static_cast<int32_t>(segments.size());
  out.ppl = stats.ppl();
  out.ppl_sd = stats.ppl_sd();
  return out;
}

}  // namespace hearth::quality
