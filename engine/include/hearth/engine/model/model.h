// A loaded model: hyperparameters and weights bound in place to the mapped GGUF
// file, plus the forward pass expressed as a backend graph.
#pragma once

#include <hearth/engine/backend/backend.h>
#include <hearth/core/result.h>
#include <hearth/engine/gguf/reader.h>
#include <hearth/engine/kv/kv_cache.h>
#include <hearth/engine/kv/kv_pool.h>
#include <hearth/engine/kv/memory_estimate.h>
#include <hearth/engine/model/hparams.h>
#include <hearth/engine/model/weight_memory.h>
#include <hearth/engine/model/weights.h>
#include <hearth/engine/quant/kernels.h>

#include <cstdint>
#include <deque>
#include <filesystem>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace hearth::model {

struct LoadProgress {
  uint64_t done_bytes = 0;
  uint64_t total_bytes = 0;
};
using ProgressFn = std::function<void(const LoadProgress&)>;

enum class MemoryCheck { Enforce, Skip };

struct LoadOptions {
  gguf::LoadMode mode = gguf::LoadMode::Mmap;
  // Where the weights of a mapped file live (weight_memory.h); a file read
  // into memory (LoadMode::Memory) is used as it is.
  WeightMemory weights = WeightMemory::Auto;
  MemoryCheck memory_check = MemoryCheck::Enforce;
  // The CPU kernel level the model will run at (the backend's cap). With
  // copied weights (HugePageCopy; the file's pages are never written), the
  // products whose kernels at that level read a 16-row interleaved layout
  // faster (quant/interleave.h: Q4_0 on x86, Q8_0 with VNNI) are rearranged
  // once here.
  // Every backend reads either layout; Scalar keeps every weight plain.
  quant::KernelLevel cpu_kernels = quant::KernelLevel::Avx512;
  // Memory the caller will need besides the weights (KV cache, scratch),
  // included in the check made before anything is loaded.
  uint64_t extra_bytes = 0;
  ProgressFn progress;
  // Asked between pieces of the load (tensors, 64 MiB reads): true ends it
  // with ErrorCode::Cancelled (a newer load superseded it, the app closes).
  std::function<bool()> cancelled;
};

// Reads MemAvailable from /proc/meminfo (0 when unknown).
uint64_t available_memory_bytes();
// OutOfMemory "needs 5.1 GB, 3.2 GB available (...)" when needed > available.
Status check_memory(uint64_t needed, uint64_t available, const std::string& what);

// The families Hearth can run, for messages and `hearth-cli info`.
std::vector<std::string> supported_architectures();

// Last: the last row's logits, and past its K/V store the last layer
// computes that row only. LastOfWholeLayers: the same logits, every layer
// computed for every row (an observer of the products, as the importance
// collector, then sees every row). All: every row's logits.
enum class LogitsRows { Last, LastOfWholeLayers, All };

// One batch of tokens for the forward pass; positions are absolute in the cache.
struct Batch {
  std::span<const int32_t> tokens;
  std::span<const int32_t> positions;  // same length as tokens
};

// One forward pass over several sequences sharing a kv::KvPool
// (runtime::Scheduler): token i belongs to sequence token_seq[i], whose block
// table is tables[token_seq[i] * pool.table_blocks() ...]; positions count
// within each sequence. Logits are computed for the tokens listed in
// logit_tokens (indices into tokens), in that order.
struct SequenceBatch {
  std::span<const int32_t> tokens;
  std::span<const int32_t> positions;  // same length as tokens
  std::span<const int32_t> token_seq;  // same length as tokens
  std::span<const int32_t> tables;     // n_seq * pool.table_blocks() pool blocks
  std::span<const int32_t> logit_tokens;
};

// One pass of an embedding model over whole texts (runtime::Embedder).
// Token i belongs to text token_seq[i] (empty: one text, over a KvCache),
// sits at position positions[i] within it, and its query sees the keys of
// its own text up to key_limits[i]: its own position for causal models, the
// text's last position for bidirectional encoders. tables: as in
// SequenceBatch (empty with a KvCache).
struct EmbedBatch {
  std::span<const int32_t> tokens;
  std::span<const int32_t> positions;
  std::span<const int32_t> key_limits;
  std::span<const int32_t> token_seq;
  std::span<const int32_t> tables;
};

class Model {
 public:
  static Result<std::unique_ptr<Model>> load(const std::filesystem::path& path, const LoadOptions& options = {});
  // Binds an already opened file (tests).
  static Result<std::unique_ptr<Model>> from_file(gguf::GgufFile file, const LoadOptions& options = {});

  const HParams& hparams() const { return hparams_; }
  const ModelWeights& weights() const { return weights_; }
  const gguf::GgufFile& file() const { return file_; }
  uint64_t weight_bytes() const { return weight_bytes_; }
  // Where the weights ended up: Mapped or HugePageCopy.
  WeightMemory weight_memory() const { return weight_memory_; }
  // Weight bytes read per generated token (every matrix once; the embedding
  // table only for one row; of each stacked expert tensor, the n_expert_used
  // experts a token is routed to: the active bytes, what decode speed follows).
  uint64_t bytes_per_token() const;
  // Bytes of the stacked expert tensors (all experts): part of weight_bytes(),
  // what a placement keeping experts apart would move. 0 for dense models.
  uint64_t expert_bytes() const;

  // Builds the forward pass for `batch` into `graph`, writing K/V for the
  // batch's positions into `cache`. Returns the logits tensor:
  // {n_vocab, rows} where rows is 1 (Last) or the batch length (All).
  backend::Tensor* build_forward(backend::Graph& graph, const Batch& batch, const kv::KvCache& cache,
                                 LogitsRows rows) const;

  // Runs build_forward on `backend` with the logits ending in `logits`
  // (rows x n_vocab; after an error its contents are unspecified).
  // Advances cache.used() past the batch.
  Status forward(backend::Backend& backend, kv::KvCache& cache, const Batch& batch, LogitsRows rows,
                 std::vector<float>& logits) const;

  // The pass over several sequences: every matrix product runs once over
  // all the batch's rows (each weight row is read once for all sequences),
  // each token attends within its own sequence. K/V of the batch are written
  // into the pool blocks its tables name. `logits` gets
  // logit_tokens.size() x n_vocab values. Backends without
  // supports_sequence_batches() answer Unsupported.
  backend::Tensor* build_sequences(backend::Graph& graph, const SequenceBatch& batch, const kv::KvPool& pool) const;
  Status forward_sequences(backend::Backend& backend, const kv::KvPool& pool, const SequenceBatch& batch,
                           std::vector<float>& logits) const;

  // Whether the model has a language-model head (an encoder such as BERT
  // has none: it only gives hidden states to pool).
  bool has_lm_head() const { return weights_.output != nullptr; }
  // The hidden states of every token of `batch` after the last layer (and
  // the final norm when the family has one), n_tokens x n_embd in `hidden`.
  // Over a pool (several texts, each in its own sequence; the backend must
  // support sequence batches) or over a cache (one text). K/V are written
  // as a side effect; nothing else of the cache changes.
  Status hidden_states(backend::Backend& backend, const kv::KvPool& pool, const EmbedBatch& batch,
                       std::vector<float>& hidden) const;
  Status hidden_states(backend::Backend& backend, const kv::KvCache& cache, const EmbedBatch& batch,
                       std::vector<float>& hidden) const;

  // KV cache configuration for this model.
  // Windowed layers are Full here (any batch, any backend); runtime::Session
  // asks for rings with the overload.
  kv::KvCacheConfig kv_config(int64_t n_ctx, DType type) const;
  kv::KvCacheConfig kv_config(int64_t n_ctx, DType type, int64_t n_batch, kv::WindowedLayers windowed) const;
  // Sliding window per layer (0: global); empty when the model has none.
  std::vector<int32_t> layer_windows() const;
  // The shapes the memory estimate needs (kv::estimate_memory, kv::scratch_sizes).
  kv::ModelDims memory_dims() const;

 private:
  bool is_expert_tensor(const Tensor& t) const;
  // Unsupported, naming the file, for a model without a language-model head.
  Status require_lm_head() const;
  Status check_embed_batch(const EmbedBatch& batch, int64_t max_positions) const;
  backend::Tensor* build_hidden(backend::Graph& graph, const EmbedBatch& batch,
                                const std::function<backend::KvView(int64_t)>& layer_view,
                                std::span<const int32_t> type_ids) const;
  Status run_hidden(backend::Backend& backend, const EmbedBatch& batch,
                    const std::function<backend::KvView(int64_t)>& layer_view, std::vector<float>& hidden) const;
  uint64_t active_expert_bytes(const Tensor& t) const;
  explicit Model(gguf::GgufFile file) : file_(std::move(file)) {}
  static Result<std::unique_ptr<Model>> bind(gguf::GgufFile file);
  // Interleaves the products that have interleaved kernels at `cap`
  // (LoadOptions::cpu_kernels), in the private copy of the weights.
  void interleave_weights(quant::KernelLevel cap);
  // Faults the mapped weights in, reporting progress.
  Status fault_in(const ProgressFn& progress, const std::function<bool()>& cancelled);
  // Reads the weights' byte range of `path` into huge-page memory and points
  // every weight tensor there; the mapped pages are never touched.
  Status copy_weights(const std::filesystem::path& path, const ProgressFn& progress,
                      const std::function<bool()>& cancelled);
  gguf::GgufFile file_;
  HugePageBuffer weight_copy_;  // empty while the weights are used in place
  WeightMemory weight_memory_ = WeightMemory::Mapped;
  HParams hparams_;
  ModelWeights weights_;
  std::deque<Tensor> tensors_;
  uint64_t weight_bytes_ = 0;
  const struct ArchDef* arch_ = nullptr;
};

}  // namespace hearth::model
