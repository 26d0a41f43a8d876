// Moving cached keys to new positions without recomputing them: RoPE rotates
// each (pair of) dimensions by an angle linear in the position, so a key
// computed at position p becomes the key at p + delta by one more rotation of
// delta. Used by the evict and summarize overflow policies.
#pragma once

#include <hearth/engine/backend/backend.h>
#include <hearth/core/result.h>
#include <hearth/engine/kv/kv_cache.h>
#include <hearth/engine/model/hparams.h>

#include <cstdint>

namespace hearth::runtime {

// Re-rotates the K rows of positions [begin, end) of every layer by `delta`
// positions, through the backend's RoPE op (rows are converted to F32, rotated
// and stored back in the cache type). V rows do not depend on the position.
Status shift_keys(backend::Backend& backend, kv::KvCache& cache, const model::HParams& hp, int64_t begin,
                  int64_t end, int32_t delta);

// Moves the K/V of positions [src, src+count) to [dst, dst+count) and
// re-rotates the keys by dst - src.
Status relocate_positions(backend::Backend& backend, kv::KvCache& cache, const model::HParams& hp, int64_t src,
                          int64_t dst, int64_t count);

}  // namespace hearth::runtime
