// One KV memory shared by many sequences (runtime::Scheduler): every layer's
// K and V in a pool of fixed-size blocks, handed out one block at a time.
// Each sequence keeps its own block table (logical block -> pool block), so
// sequences of any length share the memory without reserving a whole context
// each, and sequences that start with the same tokens (a system prompt) can
// point at the same blocks: blocks are reference counted, and a partly
// shared block is copied before a sequence writes into it (copy_block).
// Sliding-window layers hold every position here (masked by the attention
// kernel), unlike the rings of kv::KvCache.
#pragma once

#include <hearth/core/result.h>
#include <hearth/engine/backend/backend.h>
#include <hearth/engine/kv/sizing.h>

#include <cstdint>
#include <memory>
#include <vector>

namespace hearth::kv {

struct KvPoolConfig {
  int64_t n_layer = 0;
  int64_t n_head_kv = 0;
  int64_t head_dim = 0;
  DType type = DType::F16;
  // Blocks of kBlockTokens positions in the pool (shared by all sequences).
  int64_t n_blocks = 0;
  // Positions one sequence may reach (the length of its block table, rounded
  // up to whole blocks).
  int64_t max_seq_positions = 0;
  // Positions of the first pass (the scheduler's tokens per step): their
  // blocks, the first ones allocate() hands out, are mapped in every layer's
  // K and V when the pool is made, so a first request's prompt takes no page
  // faults there (0: none).
  int64_t first_pass_positions = 0;
};

// 2 (K and V) * n_layer * n_head_kv * row_bytes(head_dim) * n_blocks * kBlockTokens:
// what KvPool::create allocates. Errors as kv_cache_bytes.
Result<uint64_t> kv_pool_bytes(const KvPoolConfig& config);

class KvPool {
 public:
  // Each layer's K and V live on the backend that runs the layer
  // (Backend::backend_for_layer): one buffer per run of consecutive layers
  // with the same owner, so a GPU+CPU split keeps its GPU layers' blocks in
  // device memory and the rest in host memory. A buffer may or may not be
  // host-visible.
  static Result<std::unique_ptr<KvPool>> create(backend::Backend& backend, const KvPoolConfig& config);

  const KvPoolConfig& config() const { return config_; }
  uint64_t bytes() const { return bytes_; }
  int64_t total_blocks() const { return config_.n_blocks; }
  int64_t free_blocks() const { return static_cast<int64_t>(free_.size()); }
  // Entries of one sequence's block table.
  int32_t table_blocks() const { return table_blocks_; }

  // A free block, held once; LimitExceeded when the pool is full.
  Result<int32_t> allocate();
  // One more holder of `block` (a sequence sharing a prefix block).
  void retain(int32_t block);
  // One holder fewer; the block is free again when none is left.
  void release(int32_t block);
  int32_t holders(int32_t block) const { return refs_[static_cast<size_t>(block)]; }
  // Whether the host can read and write the blocks (CPU memory, unified or
  // host-visible GPU memory): copy_block needs it.
  bool host_visible() const;
  // Copies the first `positions` rows of block `src` into block `dst` in
  // every layer, K and V (copy-on-write of a partly shared block). Only on a
  // host-visible pool (elsewhere it copies nothing).
  void copy_block(int32_t src, int32_t dst, int64_t positions);

  // The view of layer `layer` for one forward pass over several sequences:
  // token t uses table seq_tables + token_seq[t] * table_blocks().
  backend::KvView layer_view(int64_t layer, const int32_t* token_seq, const int32_t* seq_tables) const;

 private:
  KvPool() = default;
  KvPoolConfig config_;
  uint64_t bytes_ = 0;
  size_t row_bytes_ = 0;
  size_t half_bytes_ = 0;  // one layer's K (or V) region
  int32_t table_blocks_ = 0;
  // Consecutive layers [first_layer, first_layer + n_layer) in one buffer.
  struct Segment {
    int64_t first_layer = 0;
    int64_t n_layer = 0;
    std::unique_ptr<backend::Buffer> buffer;
  };
  const Segment& segment_of(int64_t layer) const;
  std::vector<Segment> segments_;
  std::vector<int32_t> refs_;
  std::vector<int32_t> free_;  // a stack: the most recently freed block is reused first
};

}  // namespace hearth::kv
