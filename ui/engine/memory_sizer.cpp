#include "engine/memory_sizer.h"

#include <hearth/engine/kv/memory_estimate.h>
#include <hearth/engine/kv/sizing.h>

#include <fstream>
#include <sstream>
#include <string>

namespace hearth::ui {

MemoryBreakdown EngineMemorySizer::estimate(const ModelShape& shape, int n_ctx,
                                            settings::KvCacheType kv_type) const {
  MemoryBreakdown b;
  b.weights_bytes = shape.weights_bytes;
  const DType type = kv_type == settings::KvCacheType::Q8_0 ? DType::Q8_0 : DType::F16;
  // An invalid shape (a model the engine could not describe) shows no KV bar
  // rather than a made-up one.
  // Sliding-window layers as the rings the CPU backend keeps for the
  // runtime's default batch.
  b.kv_bytes = kv::kv_cache_bytes(shape.n_layer, shape.n_head_kv, shape.head_dim, n_ctx, type, shape.layer_windows,
                                  kv::kScratchBatchTokens, kv::WindowedLayers::Ring)
                   .value_or(0);
  kv::ModelDims dims{shape.n_layer, shape.n_embd, shape.n_head, shape.n_head_kv,
                    shape.head_dim, shape.n_ff, shape.n_vocab};
  dims.projections = shape.projections;
  dims.layer_windows = shape.layer_windows;
  dims.n_expert = shape.n_expert;
  dims.n_expert_used = shape.n_expert_used;
  dims.n_ff_exp = shape.n_ff_exp;
  dims.expert_biases = shape.expert_biases;
  b.scratch_bytes = kv::scratch_bytes(dims, n_ctx).value_or(0);
  return b;
}

uint64_t available_ram_bytes() {
  std::ifstream in("/proc/meminfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("MemAvailable:", 0) == 0) {
      std::istringstream fields(line.substr(13));
      uint64_t kib = 0;
      fields >> kib;
      return kib * 1024;
    }
  }
  return 0;
}

}  // namespace hearth::ui
