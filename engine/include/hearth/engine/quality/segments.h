// What a quality measure scores: token sequences, each evaluated from an
// empty cache, and in each the positions whose next token is scored.
//
// A text becomes windows as the reference engine's perplexity tool cuts it:
// the text is tokenized once (BOS as the vocabulary adds it), split into
// floor(n / n_ctx) windows of n_ctx tokens (the rest is dropped), the first
// token of every window is replaced by BOS when the vocabulary adds one, and
// only the second half of each window is scored (positions n_ctx/2 ..
// n_ctx-2 predict the tokens after them), so every scored token has at least
// n_ctx/2 tokens of context.
#pragma once

#include <hearth/core/result.h>
#include <hearth/engine/backend/backend.h>
#include <hearth/engine/kv/kv_cache.h>
#include <hearth/engine/model/model.h>
#include <hearth/engine/tokenizer/tokenizer.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace hearth::quality {

// Logits at positions [first, tokens.size() - 1) are scored against the
// tokens that follow them.
struct Segment {
  std::vector<int32_t> tokens;
  int32_t first = 0;

  int64_t scored() const { return static_cast<int64_t>(tokens.size()) - 1 - first; }
};

// A text tokenized for scoring, and the BOS that starts every window (none
// when the vocabulary adds no BOS).
struct ScoredText {
  std::vector<int32_t> tokens;
  std::optional<int32_t> bos;
};

ScoredText tokenize_text(const tokenizer::Tokenizer& tokenizer, std::string_view text);

// The windows of the reference's perplexity method. InvalidArgument when the
// text has fewer than 2 * n_ctx tokens (it would give no window, or windows
// the reference refuses), or n_ctx < 4.
Result<std::vector<Segment>> text_windows(const ScoredText& text, int32_t n_ctx);

struct EvalOptions {
  DType kv_type = DType::F16;
  // Tokens per forward pass.
  int32_t n_batch = 512;
};

// Runs segments through one model, one at a time from an empty cache sized
// for the longest segment, and hands each segment's scored logits
// (scored() x n_vocab, position-major) to `on_segment`.
class SegmentEvaluator {
 public:
  static Result<SegmentEvaluator> create(const model::Model& model, backend::Backend& backend, int64_t max_tokens,
                                         const EvalOptions& options);
  // Logits rows for positions [segment.first, size - 1).
  Status evaluate(const Segment& segment, std::vector<float>& logits);
  int32_t n_vocab() const { return static_cast<int32_t>(model_->hparams().n_vocab); }

 private:
  SegmentEvaluator(const model::Model& model, backend::Backend& backend, std::unique_ptr<kv::KvCache> cache,
                   int32_t n_batch)
      : model_(&model), backend_(&backend), cache_(std::move(cache)), n_batch_(n_batch) {}
  const model::Model* model_;
  backend::Backend* backend_;
  std::unique_ptr<kv::KvCache> cache_;
  int32_t n_batch_;
  std::vector<int32_t> positions_;
  std::vector<float> batch_logits_;
};

int64_t max_segment_tokens(std::span<const Segment> segments);

}  // namespace hearth::quality
