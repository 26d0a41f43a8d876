#include "hearth/engine/kv/kv_pool.h"

#include <fmt/format.h>

#include <cstring>
#include <limits>

#include "first_blocks.h"

namespace hearth::kv {

Result<uint64_t> kv_pool_bytes(const KvPoolConfig& config) {
  if (config.n_blocks <= 0 || config.max_seq_positions <= 0) {
    return make_error(ErrorCode::InvalidArgument,
                      fmt::format("KV pool: {} blocks and {} positions per sequence must be positive", config.n_blocks,
                                  config.max_seq_positions));
  }
  if (config.n_blocks > std::numeric_limits<int32_t>::max() / kBlockTokens) {
    return make_error(ErrorCode::LimitExceeded, fmt::format("KV pool: {} blocks are too many", config.n_blocks));
  }
  // The pool's bytes are a cache of n_blocks * kBlockTokens positions with
  // every layer global: the one formula.
  return kv_cache_bytes(config.n_layer, config.n_head_kv, config.head_dim, config.n_blocks * kBlockTokens, config.type);
}

Result<std::unique_ptr<KvPool>> KvPool::create(backend::Backend& backend, const KvPoolConfig& config) {
  HEARTH_TRY(const uint64_t bytes, kv_pool_bytes(config));
  HEARTH_TRY(const uint64_t row, kv_row_bytes(config.head_dim, config.type));
  std::unique_ptr<KvPool> pool(new KvPool());
  pool->config_ = config;
  pool->bytes_ = bytes;
  pool->row_bytes_ = static_cast<size_t>(row);
  pool->half_bytes_ = static_cast<size_t>(config.n_blocks * config.n_head_kv * kBlockTokens) * pool->row_bytes_;
  pool->table_blocks_ = static_cast<int32_t>(allocated_positions(config.max_seq_positions) / kBlockTokens);
  // Device memory the host cannot see (a discrete GPU) serves passes too;
  // only copy_block needs host access (host_visible()).
  const size_t layer_bytes = 2 * pool->half_bytes_;
  backend::Backend* owner = nullptr;
  for (int64_t l = 0; l < config.n_layer; ++l) {
    backend::Backend& layer_owner = backend.backend_for_layer(l);
    if (&layer_owner != owner) {
      owner = &layer_owner;
      pool->segments_.push_back(Segment{l, 0, nullptr});
    }
    ++pool->segments_.back().n_layer;
  }
  size_t total = 0;
  for (Segment& seg : pool->segments_) {
    const size_t seg_bytes = static_cast<size_t>(seg.n_layer) * layer_bytes;
    HEARTH_TRY(seg.buffer, backend.backend_for_layer(seg.first_layer).allocate(seg_bytes, backend::BufferUsage::KvCache));
    total += seg_bytes;
  }
  if (total != bytes) {
    return make_error(ErrorCode::Internal, fmt::format("KV pool layout of {} bytes differs from its size {}", total, bytes));
  }
  pool->refs_.assign(static_cast<size_t>(config.n_blocks), 0);
  // Block 0 is handed out first, then 1, 2, ...
  for (int64_t b = config.n_blocks - 1; b >= 0; --b) pool->free_.push_back(static_cast<int32_t>(b));
  if (config.first_pass_positions > 0) {
    for (const Segment& seg : pool->segments_) {
      for (int64_t l = 0; l < seg.n_layer; ++l) {
        fault_in_first_blocks(*seg.buffer, static_cast<size_t>(l) * layer_bytes, pool->half_bytes_, config.n_blocks,
                              config.first_pass_positions, config.n_head_kv, pool->row_bytes_);
      }
    }
  }
  return pool;
}

Result<int32_t> KvPool::allocate() {
  if (free_.empty()) {
    return make_error(ErrorCode::LimitExceeded,
                      fmt::format("KV pool: all {} blocks of {} positions are in use", config_.n_blocks, kBlockTokens));
  }
  const int32_t b = free_.back();
  free_.pop_back();
  refs_[static_cast<size_t>(b)] = 1;
  return b;
}

void KvPool::retain(int32_t block) { ++refs_[static_cast<size_t>(block)]; }

void KvPool::release(int32_t block) {
  int32_t& r = refs_[static_cast<size_t>(block)];
  if (r <= 0) return;
  if (--r == 0) free_.push_back(block);
}

bool KvPool::host_visible() const {
  for (const Segment& seg : segments_) {
    if (seg.buffer->host_data() == nullptr) return false;
  }
  return true;
}

const KvPool::Segment& KvPool::segment_of(int64_t layer) const {
  for (const Segment& seg : segments_) {
    if (layer < seg.first_layer + seg.n_layer) return seg;
  }
  return segments_.back();
}

void KvPool::copy_block(int32_t src, int32_t dst, int64_t positions) {
  if (!host_visible()) return;  // callers check host_visible()
  const size_t block_bytes = static_cast<size_t>(config_.n_head_kv * kBlockTokens) * row_bytes_;
  const size_t head_bytes = static_cast<size_t>(kBlockTokens) * row_bytes_;
  for (const Segment& seg : segments_) {
    auto* base = static_cast<uint8_t*>(seg.buffer->host_data());
    for (int64_t l = 0; l < seg.n_layer; ++l) {
      uint8_t* layer = base + static_cast<size_t>(l) * 2 * half_bytes_;
      for (uint8_t* half : {layer, layer + half_bytes_}) {
        for (int64_t h = 0; h < config_.n_head_kv; ++h) {
          // Rows of a head are contiguous within a block: one copy per head.
          std::memcpy(half + static_cast<size_t>(dst) * block_bytes + static_cast<size_t>(h) * head_bytes,
                      half + static_cast<size_t>(src) * block_bytes + static_cast<size_t>(h) * head_bytes,
                      static_cast<size_t>(positions) * row_bytes_);
        }
      }
    }
  }
}

backend::KvView KvPool::layer_view(int64_t layer, const int32_t* token_seq, const int32_t* seq_tables) const {
  const Segment& seg = segment_of(layer);
  auto* base = static_cast<uint8_t*>(seg.buffer->host_data());
  const size_t offset = static_cast<size_t>(layer - seg.first_layer) * 2 * half_bytes_;
  backend::KvView v;
  v.type = config_.type;
  v.n_head_kv = static_cast<int32_t>(config_.n_head_kv);
  v.head_dim = static_cast<int32_t>(config_.head_dim);
  v.block_tokens = static_cast<int32_t>(kBlockTokens);
  v.row_bytes = row_bytes_;
  v.k = base ? base + offset : nullptr;  // host addresses: the CPU backend's (always host-visible)
  v.v = base ? base + offset + half_bytes_ : nullptr;
  v.buffer = seg.buffer.get();
  v.k_offset = offset;
  v.v_offset = offset + half_bytes_;
  v.table_blocks = table_blocks_;
  v.n_blocks = static_cast<int32_t>(config_.n_blocks);
  v.token_seq = token_seq;
  v.seq_tables = seq_tables;
  return v;
}

}  // namespace hearth::kv
