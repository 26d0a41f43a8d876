// The KV cache's and the KV pool's one way of mapping, when they are made,
// the blocks a first pass writes (backend::Buffer::fault_in): a fresh
// server's first request had spent about a sixth of its prompt clearing
// those pages (docs/performance.md).
#pragma once

#include <hearth/engine/backend/backend.h>
#include <hearth/engine/kv/sizing.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace hearth::kv {

// Blocks [0, n) of one layer, where a pass of `positions` positions from
// position 0 writes (at most the layer's `layer_blocks`): in its K half at
// `k_offset` of `buffer` and its V half `half_bytes` after it. A block holds
// n_head_kv heads' rows of kBlockTokens positions.
inline void fault_in_first_blocks(backend::Buffer& buffer, size_t k_offset, size_t half_bytes, int64_t layer_blocks,
                                  int64_t positions, int64_t n_head_kv, size_t row_bytes) {
  const int64_t blocks = std::min(layer_blocks, allocated_positions(positions) / kBlockTokens);
  const size_t bytes = static_cast<size_t>(blocks * n_head_kv * kBlockTokens) * row_bytes;
  buffer.fault_in(k_offset, bytes);
  buffer.fault_in(k_offset + half_bytes, bytes);
}

}  // namespace hearth::kv
