// The memory a model needs to run: weights + KV cache + scratch. One function
// for `hearth-cli info` and the app, built on the one KV formula
// (kv_cache_bytes), so every place that shows a number shows the same one.
#pragma once

#include <hearth/engine/core/result.h>
#include <hearth/engine/quant/types.h>

#include <cstdint>

namespace hearth::kv {

// Shapes the estimate depends on.
struct ModelDims {
  int64_t n_layer = 0;
  int64_t n_embd = 0;
  int64_t n_head = 0;
  int64_t n_head_kv = 0;
  int64_t head_dim = 0;
  int64_t n_ff = 0;     // feed-forward width; 0 when unknown
  int64_t n_vocab = 0;  // logits per token; 0 when unknown
};

// Prompt tokens per batch assumed for the activations.
inline constexpr int64_t kScratchBatchTokens = 512;
// Runtime allowance: logits, token buffers, thread stacks, allocator slack.
inline constexpr uint64_t kScratchRuntimeBytes = 64ull << 20;

// Working memory besides weights and KV for a batch of min(n_batch, n_ctx)
// tokens. Per token, the floats the CPU backend's activation pool holds at
// its peak, with room for its block reuse: four vectors of n_embd (residual,
// norm, attention output, FFN output), three of n_ff (gate, up, their
// product), Q/K/V ((n_head + 2 n_head_kv) * head_dim) and the logits
// (n_vocab); at least eight vectors of n_embd when n_ff and n_vocab are
// unknown. Plus one head group's attention scores over the whole context
// (n_head / n_head_kv rows of n_ctx floats per token) and the runtime
// allowance. A test replays the CPU backend's pool over a forward graph and
// checks that this covers it.
Result<uint64_t> scratch_bytes(const ModelDims& dims, int64_t n_ctx, int64_t n_batch = kScratchBatchTokens);

struct MemoryEstimate {
  uint64_t weights_bytes = 0;  // the GGUF file: weights are used in place
  uint64_t kv_bytes = 0;       // kv_cache_bytes(n_layer, n_head_kv, head_dim, n_ctx, kv_type)
  uint64_t scratch_bytes = 0;
  uint64_t total_bytes = 0;
  int64_t n_ctx = 0;
  DType kv_type = DType::F16;
};

// Errors: an unsupported KV type or a head size that is not a whole number of
// its blocks, a non-positive count, overflow.
Result<MemoryEstimate> estimate_memory(const ModelDims& dims, uint64_t weights_bytes, int64_t n_ctx, DType kv_type);

}  // namespace hearth::kv
