// Importing a local .gguf: the header's numbers against the fixture README
// (tiny-llama: n_embd 256, 4 heads of 64, 2 KV heads, 2 layers).
#include "models/gguf_import.h"
#include "models/memory_fit.h"

#include <gtest/gtest.h>

#include <filesystem>

namespace hearth::models {
namespace {

TEST(GgufImport, ReadsTheShapeOfAFixtureModel) {
  const std::filesystem::path path = HEARTH_TEST_DATA_DIR "/models/tiny-llama-q8_0.gguf";
  auto model = describe_gguf(path);
  if (!model.ok() && model.error().code == ErrorCode::Unsupported) {
    GTEST_SKIP() << model.error().message;
  }
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
