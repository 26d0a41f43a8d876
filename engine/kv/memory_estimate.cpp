#include "hearth/engine/kv/memory_estimate.h"

#include <hearth/engine/backend/activation_plan.h>

#include <fmt/format.h>

#include <algorithm>
#include <initializer_list>

#include "hearth/core/checked_math.h"
#include "hearth/engine/kv/sizing.h"

namespace hearth::kv {
namespace {

// Products of a few int64 counts stay far below 2^63 for any real model
// (tokens <= 2^31, widths <= 2^24), so the only check needed is on inputs.
constexpr int64_t kMaxCount = int64_t{1} << 31;

}  // namespace

Result<ScratchSizes> scratch_sizes(const ModelDims& dims, int64_t n_ctx, int64_t n_batch) {
  const bool counts_ok = n_ctx > 0 && n_batch > 0 && dims.n_embd > 0 && dims.n_head > 0 && dims.head_dim > 0 &&
                         dims.n_head_kv >= 0 && dims.n_ff >= 0 && dims.n_vocab >= 0;
  if (!counts_ok) {
    return make_error(ErrorCode::InvalidArgument,
                      fmt::format("scratch size needs positive counts (n_ctx {}, n_batch {}, n_embd {}, n_head {}, "
                                  "n_head_kv {}, head_dim {})",
                                  n_ctx, n_batch, dims.n_embd, dims.n_head, dims.n_head_kv, dims.head_dim));
  }
  const bool moe = dims.n_expert > 0;
  if (moe && (dims.n_expert_used <= 0 || dims.n_expert_used > dims.n_expert || dims.n_ff_exp <= 0)) {
    return make_error(ErrorCode::InvalidArgument,
                      fmt::format("scratch size needs 1..{} experts used and a positive expert width (got {} and {})",
                                  dims.n_expert, dims.n_expert_used, dims.n_ff_exp));
  }
  for (int64_t v : {n_ctx, n_batch, dims.n_embd, dims.n_head, dims.n_head_kv, dims.head_dim, dims.n_ff, dims.n_vocab,
                    dims.n_expert, dims.n_ff_exp}) {
    if (v > kMaxCount) {
      return make_error(ErrorCode::LimitExceeded,
                        fmt::format("scratch size overflows (n_ctx {}, n_embd {}, count {})", n_ctx, dims.n_embd, v));
    }
  }
  const auto n = static_cast<uint64_t>(std::min(n_batch, n_ctx));
  const auto E = static_cast<uint64_t>(dims.n_embd);
  const uint64_t Q = static_cast<uint64_t>(dims.n_head) * static_cast<uint64_t>(dims.head_dim);
  const uint64_t KV = static_cast<uint64_t>(std::max<int64_t>(1, dims.n_head_kv)) * static_cast<uint64_t>(dims.head_dim);
  const uint64_t F = moe ? static_cast<uint64_t>(dims.n_ff_exp) : dims.n_ff > 0 ? static_cast<uint64_t>(dims.n_ff) : 4 * E;
  const auto V = static_cast<uint64_t>(dims.n_vocab);
  // A tensor of width w over the batch, and over one token.
  const auto s = [&](uint64_t w) { return backend::activation_slot_bytes(n * w); };
  const auto s1 = [](uint64_t w) { return w > 0 ? backend::activation_slot_bytes(w) : 0; };

  // What is alive at the fullest moments of the forward pass (x: the
  // residual stream entering the layer, h: after attention):
  uint64_t peak = std::max({
      2 * s(E),                            // embedding rows and their scaled copy
      2 * s(E) + s(Q) + 2 * s(KV),         // x, norm(x), q, k, v
      s(E) + 2 * s(Q) + 2 * s(KV),         // x, q and rope(q) (or its norm), k, v
      s(E) + s(Q) + 3 * s(KV),             // x, rope(q), k and rope(k) (or its norm), v
      2 * s(E) + s(Q),                     // x, attention output, its projection
      3 * s(E),                            // x, the projection (or its norm), h
  });
  if (!moe) {
    peak = std::max({peak,
                     2 * s(E) + 2 * s(F),  // h, norm(h), gate, up
                     s(E) + 3 * s(F)});    // h, gate, up, act(gate) * up
  } else {
    // Per token: router logits (X), the chosen ids and their weights (K
    // each, ids as 4-byte integers), and K slots of gate, up, their product
    // (F each) and of the experts' outputs (E).
    const auto X = static_cast<uint64_t>(dims.n_expert);
    const auto K = static_cast<uint64_t>(dims.n_expert_used);
    peak = std::max({peak,
                     2 * s(E) + s(X) + 2 * s(K),      // h, norm(h), logits, ids, weights
                     2 * s(E) + 2 * s(K) + 2 * s(K * F),  // h, norm(h), ids, weights, gate, up
                     s(E) + 2 * s(K) + 3 * s(K * F),  // h, ids, weights, gate, up, act(gate) * up
                     s(E) + 2 * s(K) + s(K * F) + s(K * E),  // h, ids, weights, act, the experts' outputs
                     2 * s(E) + s(K) + s(K * E)});    // h, weights, the experts' outputs, their weighted sum
    // The experts' outputs and their biased copy (the ids still read).
    if (dims.expert_biases) peak = std::max(peak, s(E) + 2 * s(K) + 2 * s(K * E));
  }
  if (dims.projections == ProjectionLayout::Fused) {
    peak = std::max({peak,
                     2 * s(E) + s(Q + 2 * KV),                  // x, norm(x), qkv
                     s(E) + s(Q + 2 * KV) + s(Q) + 2 * s(KV),  // x, qkv, q, k, v
                     2 * s(E) + s(2 * F),                       // h, norm(h), gate+up
                     s(E) + s(2 * F) + 2 * s(F)});              // h, gate+up, gate, up
  }
  // After the last layer: the last token's row, its norm, the logits and
  // their soft-capped copy (a batch of one keeps the whole rows).
  peak = std::max({peak, s(E) + s1(E), s1(E) + s1(V), 2 * s1(V)});

  ScratchSizes sizes;
  sizes.activation_bytes = peak;
  // One token's product by expert id converts one input row per chosen
  // expert at once.
  const uint64_t rows_converted = moe ? std::max(n, static_cast<uint64_t>(dims.n_expert_used)) : n;
  sizes.conversion_bytes = rows_converted * std::max({E, Q, F}) * sizeof(float);
  sizes.tile_bytes = static_cast<uint64_t>(kScratchTileThreads) * 64 * std::max({E, Q, F});
  if (moe) {
    // The gathered inputs (start on a cache line) then the outputs: E in and
    // F out (gate, up), or F in and E out (down).
    const auto rows_of = [&](uint64_t w) { return n * w * sizeof(float); };
    const auto line = [](uint64_t b) { return (b + 63) / 64 * 64; };
    sizes.expert_bytes = std::max(line(rows_of(E)) + rows_of(F), line(rows_of(F)) + rows_of(E));
  }
  return sizes;
}

Result<uint64_t> scratch_bytes(const ModelDims& dims, int64_t n_ctx, int64_t n_batch) {
  HEARTH_TRY(const ScratchSizes sizes, scratch_sizes(dims, n_ctx, n_batch));
  return sizes.total();
}

Result<MemoryEstimate> estimate_memory(const ModelDims& dims, uint64_t weights_bytes, int64_t n_ctx,
                                       DType kv_type) {
  return estimate_memory(dims, weights_bytes, n_ctx, kv_type, kScratchBatchTokens);
}

Result<MemoryEstimate> estimate_memory(const ModelDims& dims, uint64_t weights_bytes, int64_t n_ctx, DType kv_type,
                                       int64_t n_batch, WindowedLayers windowed) {
  MemoryEstimate e;
  e.weights_bytes = weights_bytes;
  e.n_ctx = n_ctx;
  e.kv_type = kv_type;
  e.n_batch = n_batch;
  HEARTH_TRY(e.kv_bytes, kv_cache_bytes(dims.n_layer, dims.n_head_kv, dims.head_dim, n_ctx, kv_type,
                                        dims.layer_windows, n_batch, windowed));
  HEARTH_TRY(e.scratch, scratch_sizes(dims, n_ctx, n_batch));
  e.scratch_bytes = e.scratch.total();
  auto total = checked_add(e.weights_bytes, e.kv_bytes);
  if (total) total = checked_add(*total, e.scratch_bytes);
  if (!total) return make_error(ErrorCode::LimitExceeded, "memory estimate overflows");
  e.total_bytes = *total;
  return e;
}

Result<MemoryEstimate> estimate_parallel_memory(const ModelDims& dims, uint64_t weights_bytes, int64_t n_ctx,
                                                DType kv_type, int64_t parallel, int64_t max_batch_tokens) {
  MemoryEstimate e;
  e.weights_bytes = weights_bytes;
  e.n_ctx = n_ctx;
  e.kv_type = kv_type;
  e.n_batch = max_batch_tokens;
  e.parallel = parallel;
  HEARTH_TRY(e.kv_bytes, parallel_kv_bytes(dims.n_layer, dims.n_head_kv, dims.head_dim, n_ctx, kv_type, parallel));
  HEARTH_TRY(e.scratch, scratch_sizes(dims, n_ctx, max_batch_tokens));
  e.scratch_bytes = e.scratch.total();
  auto total = checked_add(e.weights_bytes, e.kv_bytes);
  if (total) total = checked_add(*total, e.scratch_bytes);
  if (!total) return make_error(ErrorCode::LimitExceeded, "memory estimate overflows");
  e.total_bytes = *total;
  return e;
}

}  // namespace hearth::kv
