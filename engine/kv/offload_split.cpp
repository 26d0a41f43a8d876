#include "hearth/engine/kv/offload_split.h"

#include <algorithm>

namespace hearth::kv {

uint64_t gpu_budget(uint64_t free_bytes) { return free_bytes > kGpuReserveBytes ? free_bytes - kGpuReserveBytes : 0; }

uint64_t offload_layer_bytes(const MemoryEstimate& estimate, int64_t n_layer) {
  const auto n = static_cast<uint64_t>(std::max<int64_t>(1, n_layer));
  return std::max<uint64_t>(1, estimate.weights_bytes / (n + 1) + estimate.kv_bytes / n);
}

LayerSplit split_layers(const MemoryEstimate& estimate, int64_t n_layer, uint64_t budget) {
  LayerSplit split;
  split.n_layer = n_layer;
  split.layer_bytes = offload_layer_bytes(estimate, n_layer);
  if (estimate.total_bytes <= budget) {
    split.kind = SplitKind::AllOnGpu;
    split.gpu_layers = n_layer;
    split.gpu_bytes = estimate.total_bytes;
    return split;
  }
  uint64_t layers = 0;
  if (n_layer > 1 && budget > estimate.scratch_bytes) {
    layers = std::min<uint64_t>(static_cast<uint64_t>(n_layer - 1), (budget - estimate.scratch_bytes) / split.layer_bytes);
  }
  if (layers == 0) {
    split.cpu_bytes = estimate.total_bytes;
    return split;
  }
  const uint64_t on_gpu = layers * split.layer_bytes;
  split.kind = SplitKind::Partial;
  split.gpu_layers = static_cast<int64_t>(layers);
  split.gpu_bytes = on_gpu + estimate.scratch_bytes;
  split.cpu_bytes = estimate.total_bytes - on_gpu;
  return split;
}

}  // namespace hearth::kv
