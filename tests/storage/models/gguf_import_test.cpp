// Importing a local .gguf: the header's numbers against the fixture README
// (tiny-llama: n_embd 256, 4 heads of 64, 2 KV heads, 2 layers).
#include <hearth/models/gguf_import.h>
#include <hearth/models/memory_fit.h>

#include <gtest/gtest.h>

#include <filesystem>

namespace hearth::models {
namespace {

TEST(GgufImport, ReadsTheShapeOfAFixtureModel) {
  const std::filesystem::path path = HEARTH_TEST_DATA_DIR "/models/tiny-llama-q8_0.gguf";
  auto model = describe_gguf(path);
  ASSERT_TRUE(model.ok()) << model.error().message;
  EXPECT_EQ(model->architecture, "llama");
  EXPECT_EQ(model->shape.n_layer, 2u);
  EXPECT_EQ(model->shape.n_head, 4u);
  EXPECT_EQ(model->shape.n_head_kv, 2u);
  EXPECT_EQ(model->shape.head_dim, 64u);
  EXPECT_EQ(model->shape.n_embd, 256u);
  ASSERT_EQ(model->variants.size(), 1u);
  EXPECT_EQ(model->variants[0].size_bytes, std::filesystem::file_size(path));
  EXPECT_FALSE(model->variants[0].size_is_estimate);
  // KV for 64 tokens in F16: 2 * 2 layers * (2*64) * 64 * 2 bytes.
  EXPECT_EQ(kv_cache_bytes(model->shape, 64, KvType::F16), 2ull * 2 * 128 * 64 * 2);
}

TEST(GgufImport, MissingFileIsAnError) {
  EXPECT_FALSE(describe_gguf("/nonexistent/x.gguf").ok());
}

}  // namespace
}  // namespace hearth::models

// The estimate the picker shows for an imported model equals the engine's own
// allocation size for the numbers in the file header, for every fixture model.
#include <hearth/engine/gguf/reader.h>
#include <hearth/engine/kv/memory_estimate.h>
#include <hearth/engine/kv/sizing.h>

namespace hearth::models {
namespace {

TEST(GgufImport, EstimateForFixtureModelsEqualsTheEngineAllocation) {
  int checked = 0;
  for (const auto& entry : std::filesystem::directory_iterator(HEARTH_TEST_DATA_DIR "/models")) {
    if (entry.path().extension() != ".gguf") continue;
    SCOPED_TRACE(entry.path().filename().string());
    auto model = describe_gguf(entry.path());
    ASSERT_TRUE(model.ok()) << model.error().message;
    // The header read directly, independent of describe_gguf.
    auto file = gguf::GgufFile::open(entry.path());
    ASSERT_TRUE(file.ok());
    const std::string arch = file->architecture().value();
    const auto n_layer = file->get_uint(arch + ".block_count").value();
    const auto n_head = file->get_uint(arch + ".attention.head_count").value();
    const auto n_embd = file->get_uint(arch + ".embedding_length").value();
    const auto n_head_kv = file->find_uint(arch + ".attention.head_count_kv").value().value_or(n_head);
    const auto head_dim = file->find_uint(arch + ".attention.key_length").value().value_or(n_embd / n_head);
    // Sliding-window layers as the fixtures' README documents them (tiny
    // Gemma 3: five local layers of window 24, then one global; tiny
    // gpt-oss: layer 0 of window 16, then layer 1 global); the engine
    // keeps them as rings of window + one batch.
    std::vector<int32_t> windows;
    if (arch == "gemma3") windows = {24, 24, 24, 24, 24, 0};
    if (arch == "gpt-oss") windows = {16, 0};  // alternating, layer 0 windowed (window 16)
    ASSERT_EQ(model->shape.layer_windows, windows);
    auto engine_kv = [&](uint32_t n_ctx, DType type) {
      return kv::kv_cache_bytes(static_cast<int64_t>(n_layer), static_cast<int64_t>(n_head_kv),
                                static_cast<int64_t>(head_dim), n_ctx, type, windows, kv::kScratchBatchTokens,
                                kv::WindowedLayers::Ring);
    };
    for (KvType kv_type : {KvType::F16, KvType::Q8_0}) {
      for (uint32_t n_ctx : {1u, 100u, 4096u}) {
        const auto estimate = estimate_memory(model->shape, model->variants[0].size_bytes, {n_ctx, kv_type});
        auto engine = engine_kv(n_ctx, kv_type == KvType::F16 ? DType::F16 : DType::Q8_0);
        if (!engine.ok() && kv_type == KvType::Q8_0) {
          // Heads narrower than a Q8_0 block (stories260K: 8) run with F16.
          engine = engine_kv(n_ctx, DType::F16);
        }
        ASSERT_TRUE(engine.ok()) << engine.error().message;
        EXPECT_EQ(estimate.kv_bytes, engine.value());
        EXPECT_EQ(estimate.weights_bytes, std::filesystem::file_size(entry.path()));
      }
    }
    ++checked;
  }
  EXPECT_GE(checked, 5);
}

}  // namespace
}  // namespace hearth::models
