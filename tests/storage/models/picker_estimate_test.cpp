// The estimate the picker shows for a fixture model (imported from its
// .gguf header, app/models memory fit) is the engine's: equal to
// kv::estimate_memory for the loaded model's shapes, part by part, and to what
// a session at that context allocates on the CPU backend.
#include <gtest/gtest.h>
#include <hearth/engine/backend/activation_plan.h>
#include <hearth/engine/backend/cpu_backend.h>
#include <hearth/engine/kv/memory_estimate.h>
#include <hearth/engine/model/model.h>
#include <hearth/engine/runtime/session.h>

#include <algorithm>
#include <filesystem>
#include <initializer_list>

#include <hearth/models/gguf_import.h>
#include <hearth/models/memory_fit.h>
#include "../../engine/runtime/windowed_model.h"

namespace hearth::models {
namespace {

// The picker's numbers for `path` against the engine's estimate and a
// session's allocation, at each context size.
void check_model(const std::filesystem::path& path, std::initializer_list<uint32_t> contexts) {
  SCOPED_TRACE(path.filename().string());
  auto imported = describe_gguf(path);
  ASSERT_TRUE(imported.ok()) << imported.error().message;
  auto model = model::Model::load(path);
  ASSERT_TRUE(model.ok()) << model.error().message;
  EXPECT_EQ(imported->shape.layer_windows, (*model)->layer_windows());
  for (const uint32_t n_ctx : contexts) {
    SCOPED_TRACE(n_ctx);
    const KvSettings kv{n_ctx, KvType::F16};
    const MemoryEstimate shown = estimate_memory(imported->shape, imported->variants[0].size_bytes, kv);
    auto engine = kv::estimate_memory((*model)->memory_dims(), std::filesystem::file_size(path), n_ctx,
                                      DType::F16);
    ASSERT_TRUE(engine.ok()) << engine.error().message;
    EXPECT_EQ(shown.weights_bytes, engine->weights_bytes);
    EXPECT_EQ(shown.kv_bytes, engine->kv_bytes);
    EXPECT_EQ(shown.scratch_bytes, engine->scratch_bytes);
    EXPECT_EQ(shown.total_bytes, engine->total_bytes);

    // A session with the app's defaults (batch included) allocates it.
    auto be = backend::make_cpu_backend({1});
    runtime::SessionConfig config;
    config.n_ctx = n_ctx;
    config.kv_type = DType::F16;
    auto session = runtime::Session::create(**model, *be, config);
    ASSERT_TRUE(session.ok()) << session.error().message;
    std::vector<int32_t> prompt(n_ctx - 1);
    for (size_t i = 0; i < prompt.size(); ++i) prompt[i] = static_cast<int32_t>(1 + i % 7);
    ASSERT_TRUE((*session)->prefill(prompt).ok());
    ASSERT_TRUE((*session)->decode(1).ok());
    const backend::MemoryUse use = be->memory_use();
    EXPECT_EQ(use.kv_bytes, shown.kv_bytes);
    if (imported->shape.n_expert == 0) {
      EXPECT_EQ(use.scratch_high_water_bytes, shown.scratch_bytes);
      EXPECT_EQ(use.scratch_growths, 0u);
    } else {
      // Known gap: the greedy arena planner fragments on a mixture-of-experts
      // graph and needs up to one residual-width slot more than the
      // estimate (the largest live set); the CPU backend grows the arena
      // once. The estimate is exact for every dense model above.
      const auto batch = static_cast<uint64_t>(std::min<uint32_t>(n_ctx, kv::kScratchBatchTokens));
      EXPECT_LE(use.scratch_high_water_bytes,
                shown.scratch_bytes + backend::activation_slot_bytes(batch * imported->shape.n_embd));
      EXPECT_LE(use.scratch_growths, 1u);
    }
  }
}

TEST(PickerEstimate, EqualsTheEngineEstimateAndAllocationForEveryFixtureModel) {
  int checked = 0;
  for (const auto& entry : std::filesystem::directory_iterator(HEARTH_TEST_DATA_DIR "/models")) {
    if (entry.path().extension() != ".gguf") continue;
    check_model(entry.path(), {64u, 300u});
    ++checked;
  }
  EXPECT_GE(checked, 10);
}

// A model with sliding-window layers: the picker counts their rings (window
// + one batch) from the header, as the session allocates them.
TEST(PickerEstimate, CountsSlidingWindowRings) {
  const auto file = runtime::testing::write_windowed_model(runtime::testing::WindowedModelSpec{}, "picker");
  const std::string& path = file.path();
  check_model(path, {64u, 300u, 1000u});
  auto imported = describe_gguf(path);
  ASSERT_TRUE(imported.ok());
  const uint64_t full = 2ull * 4 * 64 * 1024 * 1;  // 4 layers, one KV head of 32 F16 (64 bytes), 1024 positions, K and V
  EXPECT_EQ(kv_cache_bytes(imported->shape, 1000, KvType::F16),
            2ull * 64 * (2 * 1024 + 2 * 320));  // even layers: 24 + 256 - 1 live positions touch 10 blocks
  EXPECT_LT(kv_cache_bytes(imported->shape, 1000, KvType::F16), full);
}

}  // namespace
}  // namespace hearth::models
