#include "hearth/engine/kv/memory_estimate.h"

#include <fmt/format.h>

#include <algorithm>

#include "hearth/engine/core/checked_math.h"
#include "hearth/engine/kv/sizing.h"

namespace hearth::kv {

Result<uint64_t> scratch_bytes(const ModelDims& dims, int64_t n_ctx, int64_t n_batch) {
  if (n_ctx <= 0 || n_batch <= 0 || dims.n_embd < 0 || dims.n_head < 0 || dims.n_head_kv < 0) {
    return make_error(ErrorCode::InvalidArgument,
                      fmt::format("scratch size needs positive counts (n_ctx {}, n_batch {}, n_embd {}, n_head {}, "
                                  "n_head_kv {})",
                                  n_ctx, n_batch, dims.n_embd, dims.n_head, dims.n_head_kv));
  }
  const auto batch = static_cast<uint64_t>(std::min(n_batch, n_ctx));
  // Heads per KV head (at least 1; an unknown head count counts as 1).
  const uint64_t group = static_cast<uint64_t>(std::max<int64_t>(1, dims.n_head / std::max<int64_t>(1, dims.n_head_kv)));
  const auto u = [](int64_t v) { return static_cast<uint64_t>(std::max<int64_t>(0, v)); };
  const uint64_t known = 4 * u(dims.n_embd) + 3 * u(dims.n_ff) + (u(dims.n_head) + 2 * u(dims.n_head_kv)) * u(dims.head_dim) +
                         u(dims.n_vocab);
  const uint64_t per_token = std::max<uint64_t>(8 * u(dims.n_embd), known);
  auto activations = checked_mul(batch, per_token);
  if (activations) activations = checked_mul(*activations, sizeof(float));
  auto scores = checked_mul(batch, static_cast<uint64_t>(n_ctx));
  if (scores) scores = checked_mul(*scores, sizeof(float));
  if (scores) scores = checked_mul(*scores, group);
  std::optional<uint64_t> total;
  if (activations && scores) total = checked_add(*activations, *scores);
  if (total) total = checked_add(*total, kScratchRuntimeBytes);
  if (!total) {
    return make_error(ErrorCode::LimitExceeded,
                      fmt::format("scratch size overflows (n_ctx {}, n_embd {})", n_ctx, dims.n_embd));
  }
  return *total;
}

Result<MemoryEstimate> estimate_memory(const ModelDims& dims, uint64_t weights_bytes, int64_t n_ctx,
                                       DType kv_type) {
  MemoryEstimate e;
  e.weights_bytes = weights_bytes;
  e.n_ctx = n_ctx;
  e.kv_type = kv_type;
  HEARTH_TRY(e.kv_bytes, kv_cache_bytes(dims.n_layer, dims.n_head_kv, dims.head_dim, n_ctx, kv_type));
  HEARTH_TRY(e.scratch_bytes, scratch_bytes(dims, n_ctx));
  auto total = checked_add(e.weights_bytes, e.kv_bytes);
  if (total) total = checked_add(*total, e.scratch_bytes);
  if (!total) return make_error(ErrorCode::LimitExceeded, "memory estimate overflows");
  e.total_bytes = *total;
  return e;
}

}  // namespace hearth::kv
