#include <hearth/engine/quality/segments.h>

#include <algorithm>
#include <numeric>
#include <string>

namespace hearth::quality {

ScoredText tokenize_text(const tokenizer::Tokenizer& tokenizer, std::string_view text) {
  // BOS as the vocabulary adds it, never an EOS: the windows' last token is
  // scored like any other (the reference refuses vocabularies adding EOS).
  ScoredText out;
  const auto& vocab = tokenizer.vocab();
  out.tokens = tokenizer.tokenize(text, tokenizer::AddSpecial::AsVocab);
  if (vocab.add_eos && !out.tokens.empty() && out.tokens.back() == vocab.special.eos) out.tokens.pop_back();
  if (vocab.add_bos && vocab.special.bos != tokenizer::kNoToken) out.bos = vocab.special.bos;
  return out;
}

Result<std::vector<Segment>> text_windows(const ScoredText& text, int32_t n_ctx) {
  if (n_ctx < 4) return make_error(ErrorCode::InvalidArgument, "context of " + std::to_string(n_ctx) + " tokens: at least 4 are needed");
  const auto n = static_cast<int64_t>(text.tokens.size());
  if (n < 2 * int64_t{n_ctx}) {
    return make_error(ErrorCode::InvalidArgument,
                      "the text has " + std::to_string(n) + " tokens; a context of " + std::to_string(n_ctx) +
                          " needs at least " + std::to_string(2 * int64_t{n_ctx}));
  }
  std::vector<Segment> out;
  const int64_t windows = n / n_ctx;
  out.reserve(static_cast<size_t>(windows));
  for (int64_t w = 0; w < windows; ++w) {
    Segment s;
    const auto begin = text.tokens.begin() + w * n_ctx;
    s.tokens.assign(begin, begin + n_ctx);
    if (text.bos) s.tokens[0] = *text.bos;
    s.first = n_ctx / 2;
    out.push_back(std::move(s));
  }
  return out;
}

int64_t max_segment_tokens(std::span<const Segment> segments) {
  int64_t n = 0;
  for (const auto& s : segments) n = std::max<int64_t>(n, static_cast<int64_t>(s.tokens.size()));
  return n;
}

Result<SegmentEvaluator> SegmentEvaluator::create(const model::Model& model, backend::Backend& backend,
                                                  int64_t max_tokens, const EvalOptions& options) {
  if (max_tokens < 1 || options.n_batch < 1) {
    return make_error(ErrorCode::InvalidArgument, "segments need at least one token and a batch of at least one");
  }
  HEARTH_TRY(auto cache, kv::KvCache::create(backend, model.kv_config(max_tokens, options.kv_type)));
  return SegmentEvaluator(model, backend, std::move(cache), options.n_batch);
}

Status SegmentEvaluator::evaluate(const Segment& segment, std::vector<float>& logits) {
  const auto n = static_cast<int64_t>(segment.tokens.size());
  if (segment.first < 0 || segment.scored() < 1 || n > cache_->capacity()) {
    return make_error(ErrorCode::InvalidArgument, "a segment of " + std::to_string(n) + " tokens scored from position " +
                                                      std::to_string(segment.first) + " does not fit a cache of " +
                                                      std::to_string(cache_->capacity()));
  }
  const auto n_vocab = static_cast<size_t>(model_->hparams().n_vocab);
  logits.clear();
  logits.reserve(static_cast<size_t>(segment.scored()) * n_vocab);
  cache_->clear();
  positions_.resize(static_cast<size_t>(n));
  std::iota(positions_.begin(), positions_.end(), 0);
  const int64_t last_scored = n - 2;  // the last position whose next token exists
  for (int64_t b0 = 0; b0 <= last_scored; b0 += n_batch_) {
    const int64_t b1 = std::min<int64_t>(b0 + n_batch_, last_scored + 1);
    // Batches wholly before the scored half need no logits beyond their last row.
    const bool scored = b1 > segment.first;
    const model::Batch batch{std::span(segment.tokens).subspan(static_cast<size_t>(b0), static_cast<size_t>(b1 - b0)),
                             std::span<const int32_t>(positions_).subspan(static_cast<size_t>(b0),
                                                                          static_cast<size_t>(b1 - b0))};
    HEARTH_CHECK(model_->forward(*backend_, *cache_, batch, scored ? model::LogitsRows::All : model::LogitsRows::Last,
                                 batch_logits_));
    if (!scored) continue;
    const int64_t from = std::max<int64_t>(b0, segment.first);
    logits.insert(logits.end(), batch_logits_.begin() + static_cast<std::ptrdiff_t>((from - b0) * static_cast<int64_t>(n_vocab)),
                  batch_logits_.begin() + static_cast<std::ptrdiff_t>((b1 - b0) * static_cast<int64_t>(n_vocab)));
  }
  return {};
}

}  // namespace hearth::quality
