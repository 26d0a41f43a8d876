// Copying K/V rows of whole token positions in and out of a KvCache, for the
// prefix caches (memory and disk) and for moving kept turns after an evict.
// Works on host-visible caches (the CPU backend; Vulkan caches in host-visible
// memory); other caches are refused with Unsupported.
// Sliding-window rings (KvCache::has_rings) keep only the last positions, so
// rows read from them outside the window are stale, and writes and moves
// mark the rings as untrusted (KvCache::invalidate_rings): runtime::Session
// then prefills the context again instead of attending to stale keys.
#pragma once

#include <hearth/core/result.h>
#include <hearth/engine/kv/kv_cache.h>

#include <cstdint>
#include <span>
#include <vector>

namespace hearth::kv {

// Bytes that read_positions returns for `count` positions:
// 2 (K, V) * n_layer * n_head_kv * row_bytes * count.
uint64_t position_span_bytes(const KvCache& cache, int64_t count);

// Serialises the rows of positions [begin, end) of every layer, ordered
// layer, K then V, head, position.
Result<std::vector<uint8_t>> read_positions(const KvCache& cache, int64_t begin, int64_t end);

// Writes rows produced by read_positions for the same layout at positions
// starting at `begin` (the payload's length gives the count).
Status write_positions(KvCache& cache, int64_t begin, std::span<const uint8_t> payload);

// Copies the rows of `count` positions from `src` to `dst` (overlap-safe).
Status move_positions(KvCache& cache, int64_t src, int64_t dst, int64_t count);

}  // namespace hearth::kv
