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
  HEARTH_TRY(cache->buffer_, backend.allocate(static_cast<size_t>(bytes), backend::BufferUsage::KvCache));
  cache->block_table_.resize(static_cast<size_t>(cache->blocks_per_layer_));
  std::iota(cache->block_table_.begin(), cache->block_table_.end(), 0);
  return cache;
}

backend::KvView KvCache::layer_view(int64_t layer) const {
  // Memory order: layer, then K or V, then the layer's blocks.
  const size_t half = static_cast<size_t>(blocks_per_layer_ * config_.n_head_kv * kBlockTokens) * row_bytes_;
  auto* base = static_cast<uint8_t*>(buffer_->host_data()) + static_cast<size_t>(layer) * 2 * half;
  backend::KvView v;
  v.type = config_.type;
  v.n_head_kv = static_cast<int32_t>(config_.n_head_kv);
  v.head_dim = static_cast<int32_t>(config_.head_dim);
  v.block_tokens = static_cast<int32_t>(kBlockTokens);
  v.row_bytes = row_bytes_;
  v.k = base;
  v.v = base + half;
  v.buffer = buffer_.get();
  v.k_offset = static_cast<size_t>(layer) * 2 * half;
  v.v_offset = v.k_offset + half;
  v.block_table = block_table_.data();
  v.n_blocks = static_cast<int32_t>(blocks_per_layer_);
  return v;
}

}  // namespace hearth::kv
