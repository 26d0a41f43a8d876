// The KV cache of one conversation: for every layer, K and V rows in
// fixed-size blocks of kBlockTokens positions. Logical blocks map to physical
// blocks through a per-layer block table, so paging, prefix sharing and
// eviction can move blocks without touching the attention kernels.
#pragma once

#include <hearth/engine/backend/backend.h>
#include <hearth/core/result.h>
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
  // Sliding windows: empty (all layers global) or one entry per layer (0:
  // global). Windowed layers are sized by layer_positions(n_ctx, window,
  // n_batch, windowed); with Ring, forward passes may carry at most n_batch
  // consecutive positions (n_batch <= 0: n_ctx).
  std::vector<int32_t> layer_windows = {};
  int64_t n_batch = 0;
  WindowedLayers windowed = WindowedLayers::Full;
};

// kv_cache_bytes for a cache configuration: what KvCache::create allocates.
Result<uint64_t> kv_cache_bytes(const KvCacheConfig& config);

class KvCache {
 public:
  // Allocates kv_cache_bytes(config) bytes (exactly that many) where the
  // layers run: each run of consecutive layers with the same
  // backend.backend_for_layer() gets one buffer of the sum of its layers'
  // sizes on that backend, so with partial offload a layer's K/V live on the
  // device that runs the layer.
  static Result<std::unique_ptr<KvCache>> create(backend::Backend& backend, const KvCacheConfig& config);

  const KvCacheConfig& config() const { return config_; }
  int64_t capacity() const { return allocated_positions(config_.n_ctx); }
  uint64_t bytes() const { return bytes_; }

  // Positions 0..used()-1 hold valid K/V rows (in ring layers: those still
  // inside the window, see holds_history).
  int64_t used() const { return used_; }
  void set_used(int64_t n) { used_ = n; }
  void clear();

  // The view of one layer that the backend's KvStore/Attention ops read.
  // Ring layers map logical block b to physical block b % (ring blocks), so
  // the view's block table still covers every position of the context.
  backend::KvView layer_view(int64_t layer) const;

  // Positions this layer holds physically.
  int64_t layer_capacity(int64_t layer) const;
  // True when some layer is a ring smaller than the context.
  bool has_rings() const { return !rings_.empty(); }
  // The most consecutive positions one forward pass may write (ring caches).
  int64_t max_batch_span() const;

  // Ring bookkeeping. The model calls note_written after storing positions
  // [begin, end) (consecutive): positions whose ring slots they reused are
  // gone. Writers that bypass the model (kv_rows: prefix restores, evict
  // moves) call invalidate_rings, after which nothing in a ring is trusted.
  void note_written(int64_t begin, int64_t end);
  void invalidate_rings();
  // Whether a query at position `pos` finds every key its window needs
  // (positions pos-window+1 .. pos-1) in every ring layer. Global layers
  // always do. When false the context must be prefilled again.
  bool holds_history(int64_t pos) const;

 private:
  KvCache() = default;
  KvCacheConfig config_;
  uint64_t bytes_ = 0;
  size_t row_bytes_ = 0;
  int64_t logical_blocks_ = 0;  // blocks of the whole context
  // Buffers of runs of consecutive layers on one backend.
  std::vector<std::unique_ptr<backend::Buffer>> segments_;
  // Per layer: physical blocks, its segment, byte offset of its K half in
  // the segment, and its block table.
  std::vector<int64_t> layer_blocks_;
  std::vector<size_t> layer_segment_;
  std::vector<size_t> layer_offset_;
  std::vector<size_t> layer_table_;
  // Logical -> physical block tables: [0] the identity (global layers), then
  // one per ring size.
  std::vector<std::vector<int32_t>> tables_;
  // The ring layers and, per ring layer, the positions [from, to) whose rows
  // are valid.
  struct Ring {
    int64_t layer = 0;
    int64_t window = 0;
    int64_t positions = 0;  // physical positions of the ring
    int64_t from = 0, to = 0;
  };
  std::vector<Ring> rings_;
  int64_t used_ = 0;
};

}  // namespace hearth::kv
