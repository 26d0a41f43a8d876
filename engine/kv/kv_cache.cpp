#include "hearth/engine/kv/kv_cache.h"

#include <numeric>

namespace hearth::kv {

Result<std::unique_ptr<KvCache>> KvCache::create(backend::Backend& backend, const KvCacheConfig& config) {
  HEARTH_TRY(const uint64_t bytes,
             kv_cache_bytes(config.n_layer, config.n_head_kv, config.head_dim, config.n_ctx, config.type));
  HEARTH_TRY(const uint64_t row, kv_row_bytes(config.head_dim, config.type));
  std::unique_ptr<KvCache> cache(new KvCache());
  cache->config_ = config;
  cache->bytes_ = bytes;
  cache->row_bytes_ = static_cast<size_t>(row);
  cache->blocks_per_layer_ = allocated_positions(config.n_ctx) / kBlockTokens;
  for (int64_t layer = 0; layer < config.n_layer;) {
    backend::Backend& owner = backend.backend_for_layer(layer);
    int64_t end = layer + 1;
    while (end < config.n_layer && &backend.backend_for_layer(end) == &owner) ++end;
    HEARTH_TRY(const uint64_t seg_bytes,
               kv_cache_bytes(end - layer, config.n_head_kv, config.head_dim, config.n_ctx, config.type));
    Segment seg{layer, end - layer, nullptr};
    HEARTH_TRY(seg.buffer, owner.allocate(static_cast<size_t>(seg_bytes), backend::BufferUsage::KvCache));
    cache->segments_.push_back(std::move(seg));
    layer = end;
  }
  cache->block_table_.resize(static_cast<size_t>(cache->blocks_per_layer_));
  std::iota(cache->block_table_.begin(), cache->block_table_.end(), 0);
  return cache;
}

backend::KvView KvCache::layer_view(int64_t layer) const {
  // Memory order inside a segment: layer, then K or V, then the layer's blocks.
  const size_t half = static_cast<size_t>(blocks_per_layer_ * config_.n_head_kv * kBlockTokens) * row_bytes_;
  const Segment* seg = &segments_.front();
  for (const Segment& s : segments_) {
    if (layer >= s.first_layer && layer < s.first_layer + s.n_layers) seg = &s;
  }
  const size_t offset = static_cast<size_t>(layer - seg->first_layer) * 2 * half;
  auto* host = static_cast<uint8_t*>(seg->buffer->host_data());
  backend::KvView v;
  v.type = config_.type;
  v.n_head_kv = static_cast<int32_t>(config_.n_head_kv);
  v.head_dim = static_cast<int32_t>(config_.head_dim);
  v.block_tokens = static_cast<int32_t>(kBlockTokens);
  v.row_bytes = row_bytes_;
  v.k = host ? host + offset : nullptr;
  v.v = host ? host + offset + half : nullptr;
  v.buffer = seg->buffer.get();
  v.k_offset = offset;
  v.v_offset = v.k_offset + half;
  v.block_table = block_table_.data();
  v.n_blocks = static_cast<int32_t>(blocks_per_layer_);
  return v;
}

}  // namespace hearth::kv
