// How much memory a model needs at a given context length: the numbers behind
// the settings page's breakdown bar. The engine's own sizing function plugs in
// behind this interface so the bar shows what the engine will allocate.
#pragma once

#include <hearth/engine/kv/memory_estimate.h>

#include <cstdint>
#include <vector>

#include <hearth/settings/settings.h>

namespace hearth::ui {

// The figures of a model that sizing needs (read from its GGUF header).
struct ModelShape {
  int n_layer = 0;
  int n_head_kv = 0;
  int head_dim = 0;
  int n_embd = 0;
  int n_vocab = 0;
  int n_head = 0;  // 0: unknown (then the scratch bar is left out)
  int n_ff = 0;    // 0: unknown (the engine assumes 4 * n_embd)
  // A mixture of experts (0: dense): the scratch holds n_expert_used experts'
  // activations of n_ff_exp each per token, and the router's outputs.
  int n_expert = 0;
  int n_expert_used = 0;
  int n_ff_exp = 0;
  bool expert_biases = false;
  kv::ProjectionLayout projections = kv::ProjectionLayout::Separate;
  std::vector<int32_t> layer_windows = {};  // sliding window per layer (0: global), empty when none
  uint64_t weights_bytes = 0;
};

struct MemoryBreakdown {
  uint64_t weights_bytes = 0;
  uint64_t kv_bytes = 0;
  uint64_t scratch_bytes = 0;
  uint64_t total() const { return weights_bytes + kv_bytes + scratch_bytes; }
};

class MemorySizer {
 public:
  virtual ~MemorySizer() = default;
  virtual MemoryBreakdown estimate(const ModelShape& shape, int n_ctx,
                                   settings::KvCacheType kv_type) const = 0;
};

// The engine's own sizing: KV bytes come from hearth::kv::kv_cache_bytes, the
// function the engine allocates with (2 * n_layer * n_head_kv * row bytes of
// head_dim * n_ctx rounded up to whole cache blocks). Scratch is
// hearth::kv::scratch_bytes, what the runtime reserves on the backend for its
// default prompt batch.
class EngineMemorySizer final : public MemorySizer {
 public:
  MemoryBreakdown estimate(const ModelShape& shape, int n_ctx,
                           settings::KvCacheType kv_type) const override;
};

// MemAvailable from /proc/meminfo in bytes; 0 when unknown.
uint64_t available_ram_bytes();

}  // namespace hearth::ui
