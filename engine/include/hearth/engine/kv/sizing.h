// The one formula for KV cache memory. The engine allocates exactly this, and
// `hearth-cli info` and the app's sliders show it, so what the user is told is
// what gets allocated.
#pragma once

#include <hearth/engine/core/result.h>
#include <hearth/engine/quant/types.h>

#include <cstdint>

namespace hearth::kv {

// The cache is allocated in blocks of this many token positions per layer, so
// that paging, prefix reuse and eviction work on whole blocks.
inline constexpr int64_t kBlockTokens = 32;

// Storage types the cache supports.
bool is_supported_kv_type(DType type);  // F16, Q8_0 (and F32 for tests)

// Context positions actually allocated for `n_ctx` requested positions: rounded
// up to whole blocks.
int64_t allocated_positions(int64_t n_ctx);

// Bytes of one K (or V) row of `head_dim` elements of `kv_type`.
Result<uint64_t> kv_row_bytes(int64_t head_dim, DType kv_type);

// 2 (K and V) * n_layer * n_head_kv * row_bytes(head_dim) * allocated_positions(n_ctx).
// The block overhead is the rounding of n_ctx up to whole blocks; Q8_0 adds its
// per-32-element scale through row_bytes. Errors: unsupported type, head_dim not a
// multiple of the type's block, a non-positive count, or overflow.
Result<uint64_t> kv_cache_bytes(int64_t n_layer, int64_t n_head_kv, int64_t head_dim, int64_t n_ctx,
                                DType kv_type);

}  // namespace hearth::kv
