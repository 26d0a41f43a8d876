#include "engine/memory_sizer.h"

#include <fstream>
#include <sstream>
#include <string>

namespace hearth::ui {

MemoryBreakdown FormulaMemorySizer::estimate(const ModelShape& shape, int n_ctx,
                                             app::KvCacheType kv_type) const {
  MemoryBreakdown b;
  b.weights_bytes = shape.weights_bytes;
  const uint64_t elements = 2ull * static_cast<uint64_t>(shape.n_layer) *
                            static_cast<uint64_t>(shape.n_head_kv) *
                            static_cast<uint64_t>(shape.head_dim) *
                            static_cast<uint64_t>(n_ctx > 0 ? n_ctx : 0);
  switch (kv_type) {
    case app::KvCacheType::F16: b.kv_bytes = elements * 2; break;
    case app::KvCacheType::Q8_0: b.kv_bytes = (elements + 31) / 32 * 34; break;
  }
  constexpr uint64_t kPrefillBatch = 512;
  constexpr uint64_t kActivationRows = 6;  // residual, norm, q/k/v, attention out, ffn
  b.scratch_bytes = 4ull * static_cast<uint64_t>(shape.n_vocab) +
                    4ull * kPrefillBatch * kActivationRows * static_cast<uint64_t>(shape.n_embd);
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
