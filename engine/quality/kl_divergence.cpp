#include <hearth/engine/quality/kl_divergence.h>
#include <hearth/engine/quality/perplexity.h>

#include <algorithm>
#include <cmath>
#include <string>

namespace hearth::quality {
namespace {

Status io_error(const char* what) {
  return make_error(ErrorCode::Io, std::string("base log-probabilities: ") + what + " the temporary file failed");
}

}  // namespace

Result<BaseLogProbs> BaseLogProbs::create(int32_t n_vocab) {
  if (n_vocab < 1) return make_error(ErrorCode::InvalidArgument, "base log-probabilities need a vocabulary");
  std::unique_ptr<std::FILE, FileCloser> file(std::tmpfile());
  if (!file) return make_error(ErrorCode::Io, "base log-probabilities: cannot create a temporary file");
  return BaseLogProbs(std::move(file), n_vocab);
}

Status BaseLogProbs::append(const QuantizedLogProbs& row) {
  if (row.q.size() != static_cast<size_t>(n_vocab_)) {
    return make_error(ErrorCode::InvalidArgument, "base log-probabilities: a row of " + std::to_string(row.q.size()) +
                                                      " entries for a vocabulary of " + std::to_string(n_vocab_));
  }
  // Writes go to the end; a read in between moved the position.
  if (fseeko(file_.get(), 0, SEEK_END) != 0) return io_error("seeking in");
  const float head[2] = {row.scale, row.floor};
  if (std::fwrite(head, sizeof(float), 2, file_.get()) != 2 ||
      std::fwrite(row.q.data(), sizeof(uint16_t), row.q.size(), file_.get()) != row.q.size()) {
    return io_error("writing");
  }
  ++rows_;
  return {};
}

Status BaseLogProbs::read(int64_t index, QuantizedLogProbs& row) const {
  if (index < 0 || index >= rows_) {
    return make_error(ErrorCode::InvalidArgument, "base log-probabilities: row " + std::to_string(index) + " of " +
                                                      std::to_string(rows_));
  }
  if (std::fflush(file_.get()) != 0 ||
      fseeko(file_.get(), static_cast<off_t>(static_cast<uint64_t>(index) * row_bytes()), SEEK_SET) != 0) {
    return io_error("seeking in");
  }
  float head[2];
  row.q.resize(static_cast<size_t>(n_vocab_));
  if (std::fread(head, sizeof(float), 2, file_.get()) != 2 ||
      std::fread(row.q.data(), sizeof(uint16_t), row.q.size(), file_.get()) != row.q.size()) {
    return io_error("reading");
  }
  row.scale = head[0];
  row.floor = head[1];
  return {};
}

Result<BaseRecord> record_base(const model::Model& base, backend::Backend& backend, std::span<const Segment> segments,
                               const EvalOptions& options) {
  HEARTH_TRY(auto store, BaseLogProbs::create(static_cast<int32_t>(base.hparams().n_vocab)));
  HEARTH_TRY(const PerplexityResult ppl, perplexity(base, backend, segments, options, [&](std::span<const float> row) {
               return store.append(quantize_log_probs(row));
             }));
  return BaseRecord{std::move(store), ppl};
}

Result<KldResult> compare_with_base(const model::Model& model, backend::Backend& backend, const BaseRecord& base,
                                    std::span<const Segment> segments, const EvalOptions& options) {
  HEARTH_TRY(auto eval, SegmentEvaluator::create(model, backend, max_segment_tokens(segments), options));
  if (eval.n_vocab() != base.log_probs.n_vocab()) {
    return make_error(ErrorCode::InvalidArgument, "the model's vocabulary has " + std::to_string(eval.n_vocab()) +
                                                      " tokens, the base's " + std::to_string(base.log_probs.n_vocab()));
  }
  int64_t positions = 0;
  for (const auto& s : segments) positions += s.scored();
  if (positions != base.log_probs.rows()) {
    return make_error(ErrorCode::InvalidArgument, "the segments score " + std::to_string(positions) +
                                                      " positions, the base recorded " +
                                                      std::to_string(base.log_probs.rows()));
  }
  const auto n_vocab = static_cast<size_t>(eval.n_vocab());
  NllStats nll, nll_base;
  double kld_sum = 0, kld_sum2 = 0;
  int64_t same_top = 0, row_index = 0;
  std::vector<float> klds;
  klds.reserve(static_cast<size_t>(positions));
  std::vector<float> logits;
  QuantizedLogProbs base_row;
  for (const auto& segment : segments) {
    HEARTH_CHECK(eval.evaluate(segment, logits));
    for (int64_t r = 0; r < segment.scored(); ++r) {
      HEARTH_CHECK(base.log_probs.read(row_index++, base_row));
      const auto row = std::span<const float>(logits).subspan(static_cast<size_t>(r) * n_vocab, n_vocab);
      const auto p = kl_divergence(base_row, row, segment.tokens[static_cast<size_t>(segment.first + r) + 1]);
      nll.add(p.nll);
      nll_base.add(p.nll_base);
      kld_sum += p.kld;
      kld_sum2 += p.kld * p.kld;
      same_top += p.same_top ? 1 : 0;
      klds.push_back(static_cast<float>(p.kld));
    }
  }
  KldResult out;
  out.positions = positions;
  if (positions == 0) return out;
  const auto n = static_cast<double>(positions);
  out.kld_mean = kld_sum / n;
  const double var = kld_sum2 / n - out.kld_mean * out.kld_mean;
  out.kld_sd = var > 0 && positions > 10 ? std::sqrt(var / (n - 1)) : 0.0;
  std::sort(klds.begin(), klds.end());
  const size_t mid = klds.size() / 2;
  out.kld_median = klds.size() % 2 == 0 ? 0.5 * (klds[mid - 1] + klds[mid]) : klds[mid];
  out.kld_p99 = percentile(klds, 0.99f);
  out.kld_max = klds.back();
  out.top1 = static_cast<double>(same_top) / n;
  out.ppl.scored = positions;
  out.ppl.segments = static_cast<int32_t>(segments.size());
  out.ppl.ppl = nll.ppl();
  out.ppl.ppl_sd = nll.ppl_sd();
  out.base_ppl = nll_base.ppl();
  return out;
}

}  // namespace hearth::quality
