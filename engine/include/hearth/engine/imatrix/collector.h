// Collecting an importance matrix (importance.h) while a model runs a text.
//
// ImportanceCollector is a backend::MatmulObserver: installed on a CPU
// backend (CpuBackendOptions::observer) it adds, for every weight product
// it sees, each input row's squared values to the weight's column sums. It
// keeps what the reference engine's collector keeps: products with weights
// named "blk.*" (and "output.weight" when asked) over at least 16 input rows,
// and every MoE expert product (MatMulId) with each expert's rows counted
// separately.
//
// collect_importance() runs a text the way the reference's imatrix tool does:
// tokenized once (BOS as the vocabulary adds it), cut into floor(n / n_ctx)
// chunks of n_ctx tokens (at least two are needed), the first token of each
// replaced by BOS, each chunk run from an empty cache.
#pragma once

#include <hearth/core/result.h>
#include <hearth/engine/backend/matmul_observer.h>
#include <hearth/engine/imatrix/importance.h>
#include <hearth/engine/model/model.h>

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>

namespace hearth::imatrix {

class ImportanceCollector final : public backend::MatmulObserver {
 public:
  explicit ImportanceCollector(bool include_output = false) : include_output_(include_output) {}
  void observe(const backend::Node& node) override;
  // The first problem seen (a non-finite activation, an expert id out of
  // range); collection stops adding once there is one.
  const Status& status() const { return status_; }
  // Sums and counts so far, by weight name.
  const std::map<std::string, ImportanceEntry>& entries() const { return entries_; }
  std::map<std::string, ImportanceEntry> take() { return std::move(entries_); }

 private:
  void dense(const backend::Node& node, ImportanceEntry& e);
  void experts(const backend::Node& node, ImportanceEntry& e);
  bool include_output_;
  std::map<std::string, ImportanceEntry> entries_;
  Status status_;
};

struct CollectOptions {
  int32_t n_ctx = 512;        // tokens per chunk (the reference's default)
  int32_t max_chunks = 0;     // 0: every chunk of the text
  int threads = 0;            // CPU threads; 0: one per core
  bool include_output = false;  // also collect output.weight
  DType kv_type = DType::F16;
  std::string dataset;        // recorded in imatrix.datasets (the text's file name)
  // After each chunk: chunks done and in all. Returning false cancels
  // (ErrorCode::Cancelled).
  std::function<bool(int32_t done, int32_t total)> on_chunk;
};

// Runs `text` through `model` on a CPU backend of its own (with the collector
// installed) and returns the matrix. InvalidArgument when the text is too
// short for two chunks; errors name the weight at fault.
Result<ImportanceMatrix> collect_importance(const model::Model& model, std::string_view text,
                                            const CollectOptions& options = {});

}  // namespace hearth::imatrix
