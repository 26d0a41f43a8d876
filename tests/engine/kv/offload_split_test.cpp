// The layer split that "--gpu-layers auto" and the model picker share: a
// table of (free VRAM, per-layer bytes) cases worked out by hand.
#include <gtest/gtest.h>
#include <hearth/engine/kv/offload_split.h>

namespace hearth::kv {
namespace {

constexpr uint64_t MiB = 1ull << 20;

// A model whose every part is a round number: n_layer layers of `layer_weights`
// each plus one more share for the embedding and output, `layer_kv` of KV per
// layer, and `scratch`.
MemoryEstimate model(int64_t n_layer, uint64_t layer_weights, uint64_t layer_kv, uint64_t scratch) {
  MemoryEstimate e;
  e.weights_bytes = static_cast<uint64_t>(n_layer + 1) * layer_weights;
  e.kv_bytes = static_cast<uint64_t>(n_layer) * layer_kv;
  e.scratch_bytes = scratch;
  e.total_bytes = e.weights_bytes + e.kv_bytes + e.scratch_bytes;
  return e;
}

struct Case {
  const char* what;
  int64_t n_layer;
  uint64_t layer_weights, layer_kv, scratch;
  uint64_t free_vram;
  SplitKind kind;
  int64_t gpu_layers;
};

// 4 layers of 100 MiB weights + 20 MiB KV (120 MiB each), 100 MiB embedding
// and output, 50 MiB scratch: 630 MiB in all. The budget is free - 256 MiB.
const Case kCases[] = {
    {"no GPU memory", 4, 100 * MiB, 20 * MiB, 50 * MiB, 0, SplitKind::CpuOnly, 0},
    {"less than the reserve", 4, 100 * MiB, 20 * MiB, 50 * MiB, 200 * MiB, SplitKind::CpuOnly, 0},
    {"scratch only", 4, 100 * MiB, 20 * MiB, 50 * MiB, 306 * MiB, SplitKind::CpuOnly, 0},
    {"one byte short of a layer", 4, 100 * MiB, 20 * MiB, 50 * MiB, 426 * MiB - 1, SplitKind::CpuOnly, 0},
    {"exactly one layer", 4, 100 * MiB, 20 * MiB, 50 * MiB, 426 * MiB, SplitKind::Partial, 1},
    {"two and a half layers", 4, 100 * MiB, 20 * MiB, 50 * MiB, 606 * MiB, SplitKind::Partial, 2},
    {"room for four layers but not the embedding", 4, 100 * MiB, 20 * MiB, 50 * MiB, 786 * MiB, SplitKind::Partial, 3},
    {"one byte short of everything", 4, 100 * MiB, 20 * MiB, 50 * MiB, 886 * MiB - 1, SplitKind::Partial, 3},
    {"everything", 4, 100 * MiB, 20 * MiB, 50 * MiB, 886 * MiB, SplitKind::AllOnGpu, 4},
    {"plenty", 4, 100 * MiB, 20 * MiB, 50 * MiB, 64ull << 30, SplitKind::AllOnGpu, 4},
    {"a one-layer model cannot be split", 1, 100 * MiB, 20 * MiB, 50 * MiB, 500 * MiB, SplitKind::CpuOnly, 0},
    // A 7B-class model: 28 layers of 160 MiB + 8 MiB KV (168 MiB) on an 8 GiB
    // card with 3 GiB in use: (5 GiB - 256 MiB - 300 MiB) / 168 MiB = 28.6,
    // capped at 27 because the whole model (29 * 160 + 28 * 8 + 300 MiB) does not fit.
    {"7B on a busy 8 GiB card", 28, 160 * MiB, 8 * MiB, 300 * MiB, 5ull << 30, SplitKind::Partial, 27},
    // Same card with 2 GiB free: (2048 - 256 - 300) / 168 = 8.88.
    {"7B with 2 GiB free", 28, 160 * MiB, 8 * MiB, 300 * MiB, 2ull << 30, SplitKind::Partial, 8},
};

TEST(OffloadSplit, TableOfBudgets) {
  for (const auto& c : kCases) {
    const MemoryEstimate e = model(c.n_layer, c.layer_weights, c.layer_kv, c.scratch);
    const LayerSplit s = split_layers(e, c.n_layer, gpu_budget(c.free_vram));
    EXPECT_EQ(s.kind, c.kind) << c.what;
    EXPECT_EQ(s.gpu_layers, c.gpu_layers) << c.what;
    EXPECT_EQ(s.n_layer, c.n_layer) << c.what;
    EXPECT_EQ(s.layer_bytes, c.layer_weights + c.layer_kv) << c.what;
    const uint64_t on_gpu = static_cast<uint64_t>(c.gpu_layers) * (c.layer_weights + c.layer_kv);
    switch (c.kind) {
      case SplitKind::AllOnGpu:
        EXPECT_EQ(s.gpu_bytes, e.total_bytes) << c.what;
        break;
      case SplitKind::Partial:
        EXPECT_EQ(s.gpu_bytes, on_gpu + c.scratch) << c.what;
        EXPECT_EQ(s.cpu_bytes, e.total_bytes - on_gpu) << c.what;
        EXPECT_LE(s.gpu_bytes, gpu_budget(c.free_vram)) << c.what;
        break;
      case SplitKind::CpuOnly:
        EXPECT_EQ(s.gpu_bytes, 0u) << c.what;
        EXPECT_EQ(s.cpu_bytes, e.total_bytes) << c.what;
        break;
    }
  }
}

TEST(OffloadSplit, BudgetKeepsTheReserve) {
  EXPECT_EQ(gpu_budget(0), 0u);
  EXPECT_EQ(gpu_budget(kGpuReserveBytes), 0u);
  EXPECT_EQ(gpu_budget(kGpuReserveBytes + 5), 5u);
}

TEST(OffloadSplit, LayerBytesSplitsWeightsIntoLayerSharesPlusOne) {
  MemoryEstimate e;
  e.weights_bytes = 1100;  // 10 layers + 1 share of 100
  e.kv_bytes = 300;        // 30 per layer
  EXPECT_EQ(offload_layer_bytes(e, 10), 130u);
}

}  // namespace
}  // namespace hearth::kv
