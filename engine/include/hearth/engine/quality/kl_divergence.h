// KL divergence of a model from a base model over the same scored positions.
//
// The base runs first (record_base) and leaves its distributions in a
// BaseLogProbs store: every scored position's log-probabilities quantized to
// 16 bits over the whole vocabulary (log_probs.h), the reference engine's
// --kl-divergence-base representation, so the figures are comparable with
// its own. The store lives in an unlinked temporary file, not in memory: a
// long text times a large vocabulary is gigabytes, and a comparison then
// holds one model at a time (the base is freed before a model is loaded).
#pragma once

#include <hearth/core/result.h>
#include <hearth/engine/backend/backend.h>
#include <hearth/engine/model/model.h>
#include <hearth/engine/quality/log_probs.h>
#include <hearth/engine/quality/perplexity.h>
#include <hearth/engine/quality/segments.h>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <span>
#include <vector>

namespace hearth::quality {

// Quantized rows appended in order and read back by index, kept in a
// temporary file that disappears with the store.
class BaseLogProbs {
 public:
  static Result<BaseLogProbs> create(int32_t n_vocab);

  Status append(const QuantizedLogProbs& row);
  Status read(int64_t index, QuantizedLogProbs& row) const;
  int64_t rows() const { return rows_; }
  int32_t n_vocab() const { return n_vocab_; }
  // Bytes one row takes on disk.
  uint64_t row_bytes() const { return 8 + 2 * static_cast<uint64_t>(n_vocab_); }

 private:
  struct FileCloser {
    void operator()(std::FILE* f) const { std::fclose(f); }
  };
  BaseLogProbs(std::unique_ptr<std::FILE, FileCloser> file, int32_t n_vocab)
      : file_(std::move(file)), n_vocab_(n_vocab) {}
  std::unique_ptr<std::FILE, FileCloser> file_;
  int32_t n_vocab_ = 0;
  int64_t rows_ = 0;
};

// What the base left for the comparisons: its distributions and perplexity.
struct BaseRecord {
  BaseLogProbs log_probs;
  PerplexityResult ppl;
};

Result<BaseRecord> record_base(const model::Model& base, backend::Backend& backend,
                               std::span<const Segment> segments, const EvalOptions& options = {});

struct KldResult {
  int64_t positions = 0;
  double kld_mean = 0;
  double kld_sd = 0;  // standard error of the mean
  double kld_median = 0;
  double kld_p99 = 0;
  double kld_max = 0;
  double top1 = 0;  // fraction of positions whose most likely token agrees
  PerplexityResult ppl;
  double base_ppl = 0;  // from the quantized base log-probabilities
};

// `segments` must be the ones the base was recorded on; InvalidArgument when
// the vocabulary sizes or the number of positions differ.
Result<KldResult> compare_with_base(const model::Model& model, backend::Backend& backend, const BaseRecord& base,
                                    std::span<const Segment> segments, const EvalOptions& options = {});

}  // namespace hearth::quality
