// The memory a model needs to run: weights + KV cache + scratch. One function
// for `hearth-cli info`, the picker and the runtime, built on the one KV
// formula (kv_cache_bytes) and the one scratch formula (scratch_sizes), so
// every place that shows a number shows the same one, and it is the number the
// engine allocates: the runtime reserves exactly scratch_sizes() on the backend
// before the first graph (runtime::Session::create).
#pragma once

#include <hearth/core/result.h>
#include <hearth/engine/kv/sizing.h>
#include <hearth/engine/quant/types.h>

#include <cstdint>
#include <vector>

namespace hearth::kv {

// How a layer computes its projections. Fused layers (Phi-3: one QKV matrix,
// one gate+up matrix) hold the fused product and its slices at once, which
// raises the activation peak.
enum class ProjectionLayout { Separate, Fused };

// Shapes the estimate depends on.
struct ModelDims {
  int64_t n_layer = 0;
  int64_t n_embd = 0;
  int64_t n_head = 0;
  int64_t n_head_kv = 0;
  int64_t head_dim = 0;
  int64_t n_ff = 0;     // feed-forward width; 0 when unknown
  int64_t n_vocab = 0;  // logits per token; 0 when unknown
  ProjectionLayout projections = ProjectionLayout::Separate;
  // Sliding window per layer (0: global); empty when no layer has one.
  std::vector<int32_t> layer_windows = {};
  // Mixture of experts (n_expert 0: dense). The feed-forward is then
  // n_expert_used experts of n_ff_exp each per token, and n_ff is unused.
  int64_t n_expert = 0;
  int64_t n_expert_used = 0;
  int64_t n_ff_exp = 0;
  // Each expert's products are followed by a bias of their own (gpt-oss):
  // the products and their biased copies are alive together.
  bool expert_biases = false;
};

// Prompt tokens per forward pass: the runtime's default batch
// (runtime::SessionConfig::n_batch) and the batch the estimates assume.
inline constexpr int64_t kScratchBatchTokens = 256;
// CPU threads the prefill tiles' scratch is sized for (ScratchSizes::tile_bytes).
inline constexpr int64_t kScratchTileThreads = 8;
// Formerly a fixed allowance added to the scratch estimate. The estimate is
// now exactly what the backend reserves, so nothing adds this any more; kept
// for callers that want a margin of their own.
inline constexpr uint64_t kScratchRuntimeBytes = 64ull << 20;

// The scratch memory of one forward pass of min(n_batch, n_ctx) tokens.
struct ScratchSizes {
  // The activation arena: the most bytes the activations of the forward graph
  // occupy at once when placed by backend::plan_activations (each tensor
  // rounded up to backend::kActivationAlign). Per layer the peak is one of
  // the moments listed in memory_estimate.cpp (the residual stream plus the
  // attention inputs, or plus gate, up and their product); the logits of the
  // last token are the peak of very short batches.
  uint64_t activation_bytes = 0;
  // Activations converted for the matrix products: one row of the widest
  // matrix input (n_embd, n_head * head_dim or n_ff) per token, as 4-byte
  // floats, the widest format the kernels convert to. For quantized weights
  // the same bytes hold the 8-bit activations (~1.1 bytes per value) and
  // their decode or prefill layout (<= 1.4 bytes per value).
  uint64_t conversion_bytes = 0;
  // The CPU prefill tiles' repacked weights: kScratchTileThreads threads,
  // each two 16-row groups of the widest input (at most 64 bytes per input
  // value). More threads than that grow the buffer (counted by the backend).
  uint64_t tile_bytes = 0;
  // Products by expert id (CPU): one expert's gathered input rows and its
  // output rows for up to a whole batch of tokens, as floats; 0 when dense.
  uint64_t expert_bytes = 0;
  // What the backend reserves for its matrix products (one buffer).
  uint64_t matmul_bytes() const { return conversion_bytes + tile_bytes; }
  uint64_t total() const { return activation_bytes + conversion_bytes + tile_bytes + expert_bytes; }
};

// Errors: a non-positive count, n_embd, n_head or head_dim unknown, overflow.
// n_ff and n_vocab may be 0 (unknown): then the estimate assumes n_ff = 4 *
// n_embd and leaves out the logits.
Result<ScratchSizes> scratch_sizes(const ModelDims& dims, int64_t n_ctx, int64_t n_batch = kScratchBatchTokens);

// scratch_sizes(...).total().
Result<uint64_t> scratch_bytes(const ModelDims& dims, int64_t n_ctx, int64_t n_batch = kScratchBatchTokens);

struct MemoryEstimate {
  uint64_t weights_bytes = 0;  // the GGUF file: weights are used in place
  uint64_t kv_bytes = 0;       // kv_cache_bytes(..., layer_windows, n_batch, windowed)
  uint64_t scratch_bytes = 0;  // scratch.total()
  uint64_t total_bytes = 0;
  int64_t n_ctx = 0;
  DType kv_type = DType::F16;
  ScratchSizes scratch;
  int64_t n_batch = kScratchBatchTokens;
  int64_t parallel = 1;  // sequences served at once (KV per slot)
};

// Errors: an unsupported KV type or a head size that is not a whole number of
// its blocks, a non-positive count, overflow.
Result<MemoryEstimate> estimate_memory(const ModelDims& dims, uint64_t weights_bytes, int64_t n_ctx, DType kv_type);
// Windowed layers are counted as `windowed` allocates them: Ring is what
// runtime::Session allocates on every backend, Full a cache without rings.
Result<MemoryEstimate> estimate_memory(const ModelDims& dims, uint64_t weights_bytes, int64_t n_ctx, DType kv_type,
                                       int64_t n_batch, WindowedLayers windowed = WindowedLayers::Ring);

// Serving `parallel` sequences of up to n_ctx positions at once
// (runtime::Scheduler): KV is parallel_kv_bytes (one slot per sequence,
// sliding-window layers full), scratch is one forward pass of
// max_batch_tokens rows. parallel 1 is still a pool (no rings), so it can
// exceed estimate_memory's single-conversation figure for windowed models.
Result<MemoryEstimate> estimate_parallel_memory(const ModelDims& dims, uint64_t weights_bytes, int64_t n_ctx,
                                                DType kv_type, int64_t parallel, int64_t max_batch_tokens);

}  // namespace hearth::kv
