// How many layers of a model go to the GPU in a partial offload. One function
// for the engine's "--gpu-layers auto" and the model picker's "fits with
// partial offload (N layers)", so what the picker promises is what a load does.
#pragma once

#include <hearth/engine/kv/memory_estimate.h>

#include <cstdint>

namespace hearth::kv {

// VRAM left free for the display, the driver and other programs.
inline constexpr uint64_t kGpuReserveBytes = 256ull << 20;

// Usable VRAM out of `free_bytes` (DeviceInfo::memory_free): free minus the reserve, never negative.
uint64_t gpu_budget(uint64_t free_bytes);

enum class SplitKind {
  AllOnGpu,  // every layer, the embedding and the output head in VRAM
  Partial,   // the first gpu_layers layers in VRAM, the embedding, output head and other layers in RAM
  CpuOnly,   // not even one layer fits
};

struct LayerSplit {
  SplitKind kind = SplitKind::CpuOnly;
  int64_t gpu_layers = 0;    // n_layer for AllOnGpu, 1..n_layer-1 for Partial, 0 for CpuOnly
  int64_t n_layer = 0;
  uint64_t layer_bytes = 0;  // one layer on the GPU: its weight share plus its KV cache
  uint64_t gpu_bytes = 0;    // VRAM the placement uses
  uint64_t cpu_bytes = 0;    // RAM the placement uses besides the runtime allowance (the whole
                             // estimate for CpuOnly, the rest after the GPU layers for Partial)
};

// Bytes one layer takes on the GPU. The n_layer blocks hold equal shares of
// the weights, with the embedding and output matrices together counted as one
// more share (weights / (n_layer + 1)); each layer's KV is kv_bytes / n_layer
// (kv_cache_bytes is linear in the layer count).
uint64_t offload_layer_bytes(const MemoryEstimate& estimate, int64_t n_layer);

// Places a model of `n_layer` layers with `estimate` on a GPU with `budget`
// usable bytes (gpu_budget()): everything when the whole estimate fits;
// otherwise as many whole layers as fit next to the GPU's scratch, at most
// n_layer - 1 (the embedding and output head stay on the CPU then, as the
// split backend places them); none when not one layer fits.
LayerSplit split_layers(const MemoryEstimate& estimate, int64_t n_layer, uint64_t budget);

}  // namespace hearth::kv
