#include "hearth/engine/kv/kv_cache.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <utility>

#include "first_blocks.h"

namespace hearth::kv {

Result<uint64_t> kv_cache_bytes(const KvCacheConfig& config) {
  return kv_cache_bytes(config.n_layer, config.n_head_kv, config.head_dim, config.n_ctx, config.type,
                        config.layer_windows, config.n_batch, config.windowed);
}

Result<std::unique_ptr<KvCache>> KvCache::create(backend::Backend& backend, const KvCacheConfig& config) {
  HEARTH_TRY(const uint64_t bytes, kv_cache_bytes(config));
  HEARTH_TRY(const uint64_t row, kv_row_bytes(config.head_dim, config.type));
  std::unique_ptr<KvCache> cache(new KvCache());
  KvCache& c = *cache;
  c.config_ = config;
  c.bytes_ = bytes;
  c.row_bytes_ = static_cast<size_t>(row);
  c.logical_blocks_ = allocated_positions(config.n_ctx) / kBlockTokens;
  c.tables_.emplace_back(static_cast<size_t>(c.logical_blocks_));
  std::iota(c.tables_[0].begin(), c.tables_[0].end(), 0);
  size_t offset = 0, total = 0;
  backend::Backend* owner = nullptr;
  std::vector<std::pair<backend::Backend*, size_t>> segment_bytes;
  for (int64_t l = 0; l < config.n_layer; ++l) {
    const int64_t window = config.layer_windows.empty() ? 0 : config.layer_windows[static_cast<size_t>(l)];
    const int64_t positions = layer_positions(config.n_ctx, window, config.n_batch, config.windowed);
    const int64_t blocks = positions / kBlockTokens;
    size_t table = 0;
    if (blocks < c.logical_blocks_) {
      // A ring: share the table of an earlier ring of the same size.
      for (size_t t = 1; t < c.tables_.size() && table == 0; ++t) {
        if (std::ranges::max(c.tables_[t]) + 1 == blocks) table = t;
      }
      if (table == 0) {
        table = c.tables_.size();
        std::vector<int32_t> ring(static_cast<size_t>(c.logical_blocks_));
        for (size_t b = 0; b < ring.size(); ++b) ring[b] = static_cast<int32_t>(static_cast<int64_t>(b) % blocks);
        c.tables_.push_back(std::move(ring));
      }
      c.rings_.push_back(Ring{l, window, positions, 0, 0});
    }
    backend::Backend& layer_owner = backend.backend_for_layer(l);
    if (&layer_owner != owner) {
      owner = &layer_owner;
      segment_bytes.emplace_back(owner, 0);
      offset = 0;
    }
    const size_t layer_bytes = 2 * static_cast<size_t>(blocks * config.n_head_kv * kBlockTokens) * c.row_bytes_;
    c.layer_blocks_.push_back(blocks);
    c.layer_segment_.push_back(segment_bytes.size() - 1);
    c.layer_offset_.push_back(offset);
    c.layer_table_.push_back(table);
    offset += layer_bytes;
    segment_bytes.back().second += layer_bytes;
    total += layer_bytes;
  }
  if (total != bytes) {
    return make_error(ErrorCode::Internal,
                      fmt::format("KV cache layout of {} bytes differs from its size {}", total, bytes));
  }
  for (auto& [seg_owner, seg_bytes] : segment_bytes) {
    HEARTH_TRY(auto buffer, seg_owner->allocate(seg_bytes, backend::BufferUsage::KvCache));
    c.segments_.push_back(std::move(buffer));
  }
  // The first pass writes n_batch positions from position 0.
  if (config.n_batch > 0) {
    for (size_t l = 0; l < c.layer_blocks_.size(); ++l) {
      const int64_t blocks = c.layer_blocks_[l];
      const size_t half = static_cast<size_t>(blocks * config.n_head_kv * kBlockTokens) * c.row_bytes_;
      fault_in_first_blocks(*c.segments_[c.layer_segment_[l]], c.layer_offset_[l], half, blocks, config.n_batch,
                            config.n_head_kv, c.row_bytes_);
    }
  }
  return cache;
}

void KvCache::clear() {
  used_ = 0;
  for (Ring& r : rings_) r.from = r.to = 0;
}

int64_t KvCache::layer_capacity(int64_t layer) const {
  return layer_blocks_[static_cast<size_t>(layer)] * kBlockTokens;
}

int64_t KvCache::max_batch_span() const {
  if (rings_.empty() || config_.n_batch <= 0) return capacity();
  return std::min(config_.n_batch, capacity());
}

void KvCache::note_written(int64_t begin, int64_t end) {
  for (Ring& r : rings_) {
    // The ring now holds the logical blocks ending with the one of end-1.
    const int64_t kept_from = std::max<int64_t>(0, ((end - 1) / kBlockTokens + 1) * kBlockTokens - r.positions);
    const bool extends = begin >= r.from && begin <= r.to;
    r.from = std::max(extends ? r.from : begin, kept_from);
    r.to = end;
  }
}

void KvCache::invalidate_rings() {
  for (Ring& r : rings_) r.from = r.to = 0;
}

bool KvCache::holds_history(int64_t pos) const {
  for (const Ring& r : rings_) {
    const int64_t need = std::max<int64_t>(0, pos - r.window + 1);
    if (need >= pos) continue;  // the window sees nothing before pos
    if (r.from > need || r.to < pos) return false;
  }
  return true;
}

backend::KvView KvCache::layer_view(int64_t layer) const {
  // Memory order: layer, then K or V, then the layer's blocks.
  const auto l = static_cast<size_t>(layer);
  const size_t half = static_cast<size_t>(layer_blocks_[l] * config_.n_head_kv * kBlockTokens) * row_bytes_;
  backend::Buffer* buffer = segments_[layer_segment_[l]].get();
  auto* base = static_cast<uint8_t*>(buffer->host_data());
  backend::KvView v;
  v.type = config_.type;
  v.n_head_kv = static_cast<int32_t>(config_.n_head_kv);
  v.head_dim = static_cast<int32_t>(config_.head_dim);
  v.block_tokens = static_cast<int32_t>(kBlockTokens);
  v.row_bytes = row_bytes_;
  v.k = base ? base + layer_offset_[l] : nullptr;
  v.v = base ? base + layer_offset_[l] + half : nullptr;
  v.buffer = buffer;
  v.k_offset = layer_offset_[l];
  v.v_offset = v.k_offset + half;
  const std::vector<int32_t>& table = tables_[layer_table_[l]];
  v.block_table = table.data();
  // Logical blocks (the table) and physical blocks (the memory): equal
  // except in rings.
  v.table_blocks = static_cast<int32_t>(table.size());
  v.n_blocks = static_cast<int32_t>(layer_blocks_[l]);
  return v;
}

}  // namespace hearth::kv
