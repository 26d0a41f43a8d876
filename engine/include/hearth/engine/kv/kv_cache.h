// The KV cache of one conversation: for every layer, K and V rows in
// fixed-size blocks of kBlockTokens positions. Logical blocks map to physical
// blocks through a per-layer block table, so paging, prefix sharing and
// eviction can move blocks without touching the attention kernels.
#pragma once

#include <hearth/engine/backend/backend.h>
#include <hearth/engine/core/result.h>
#include <hearth/engine/kv/sizing.h>

#include <cstdint>
#include <memory>
#include <vector>

namespace hearth::kv {

struct KvCacheConfig {
  int64_t n_layer = 0;
  int64_t n_head_kv = 0;
  int64_t head_dim = 0;
  int64_t n_ctx = 0;  // requested positions; rounded up to whole blocks
  DType type = DType::F16;
};

class KvCache {
 public:
  // Allocates kv_cache_bytes(config) bytes (exactly that many) where the
  // layers run: each run of consecutive layers with the same
  // backend.backend_for_layer() gets one buffer of kv_cache_bytes(run length,
  // ...) on that backend, so with partial offload a layer's K/V live on the
  // device that runs the layer.
  static Result<std::unique_ptr<KvCache>> create(backend::Backend& backend, const KvCacheConfig& config);

  const KvCacheConfig& config() const { return config_; }
  int64_t capacity() const { return allocated_positions(config_.n_ctx); }
  uint64_t bytes() const { return bytes_; }

  // Positions 0..used()-1 hold valid K/V rows.
  int64_t used() const { return used_; }
  void set_used(int64_t n) { used_ = n; }
  void clear() { used_ = 0; }

  // The view of one layer that the backend's KvStore/Attention ops read.
  backend::KvView layer_view(int64_t layer) const;

 private:
  KvCache() = default;
  KvCacheConfig config_;
  uint64_t bytes_ = 0;
  size_t row_bytes_ = 0;
  int64_t blocks_per_layer_ = 0;
  // Consecutive layers [first_layer, first_layer + n_layers) in one buffer.
  struct Segment {
    int64_t first_layer = 0;
    int64_t n_layers = 0;
    std::unique_ptr<backend::Buffer> buffer;
  };
  std::vector<Segment> segments_;  // in layer order, covering every layer
  std::vector<int32_t> block_table_;  // logical -> physical block, shared by the layers
  int64_t used_ = 0;
};

}  // namespace hearth::kv
