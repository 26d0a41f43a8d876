// The model summary and the memory estimate against numbers worked out by
// hand from the fixture's documented shapes (tests/data/FIXTURES-README.md:
// tiny-llama has n_embd 256, 4 heads of 64, 2 KV heads, n_ff 768, 2 layers,
// a 512-token vocabulary and a separate output matrix).
#include <gtest/gtest.h>
#include <hearth/engine/gguf/reader.h>
#include <hearth/engine/gguf/writer.h>
#include <hearth/engine/tools/model_info.h>

#include <filesystem>
#include <string>

namespace hearth::tools {
namespace {

std::string model_path(const std::string& name) { return std::string(HEARTH_TEST_DATA_DIR) + "/models/" + name; }

constexpr uint64_t kEmbd = 256, kVocab = 512, kFf = 768, kLayers = 2, kKvWidth = 2 * 64;

// Per layer: q, o (256x256), k, v (256x128), gate, up, down (256x768), two norms.
constexpr uint64_t kLayerParams = 2 * kEmbd * kEmbd + 2 * kEmbd * kKvWidth + 3 * kEmbd * kFf + 2 * kEmbd;
constexpr uint64_t kParams = 2 * kEmbd * kVocab + kEmbd + kLayers * kLayerParams;

TEST(ModelInfo, TinyLlamaSummary) {
  auto file = gguf::GgufFile::open(model_path("tiny-llama-q4_k_m.gguf"));
  ASSERT_TRUE(file.ok());
  auto s = summarize_model(*file);
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(s->architecture, "llama");
  EXPECT_EQ(s->parameters, kParams);
  EXPECT_EQ(s->file_bytes, std::filesystem::file_size(model_path("tiny-llama-q4_k_m.gguf")));
  EXPECT_EQ(s->context_length, 512);
  EXPECT_EQ(s->dims.n_layer, 2);
  EXPECT_EQ(s->dims.n_head, 4);
  EXPECT_EQ(s->dims.n_head_kv, 2);
  EXPECT_EQ(s->dims.head_dim, 64);
  EXPECT_EQ(s->dims.n_embd, 256);
  EXPECT_EQ(s->dims.n_ff, 768);
  EXPECT_EQ(s->dims.n_vocab, 512);
  EXPECT_TRUE(s->chat_template);
  // The reference's Q4_K_M mix of this file: output, blk.1.attn_v and
  // blk.1.ffn_down at Q6_K (210 bytes per 256), norms F32, the rest Q4_K
  // (144 bytes per 256).
  const uint64_t q6_elems = kEmbd * kVocab + kEmbd * kKvWidth + kEmbd * kFf;
  const uint64_t f32_elems = kEmbd + kLayers * 2 * kEmbd;
  const uint64_t q4_elems = kParams - q6_elems - f32_elems;
  EXPECT_EQ(s->bytes_by_type.at("Q6_K"), q6_elems / 256 * 210);
  EXPECT_EQ(s->bytes_by_type.at("Q4_K"), q4_elems / 256 * 144);
  EXPECT_EQ(s->bytes_by_type.at("F32"), f32_elems * 4);
  EXPECT_EQ(s->bytes_by_type.size(), 3u);
}

// tiny-gemma3 (FIXTURES-README.md, models2): head size 80 while n_embd / n_head
// is 64, 2 KV heads, 6 layers of which the first 5 have a window of 24.
TEST(ModelInfo, TinyGemma3HeadSizeAndWindows) {
  auto file = gguf::GgufFile::open(model_path("tiny-gemma3-q8_0.gguf"));
  ASSERT_TRUE(file.ok());
  auto s = summarize_model(*file);
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(s->architecture, "gemma3");
  EXPECT_EQ(s->dims.n_layer, 6);
  EXPECT_EQ(s->dims.head_dim, 80);
  EXPECT_EQ(s->dims.n_head_kv, 2);
  EXPECT_EQ(s->dims.layer_windows, (std::vector<int32_t>{24, 24, 24, 24, 24, 0}));
}

TEST(ModelInfo, MemoryEstimateByHand) {
  const kv::ModelDims dims{2, 256, 4, 2, 64};
  // F16: 2 (K and V) * 2 layers * 2 KV heads * 64 * n_ctx * 2 bytes; n_ctx 512 is whole blocks.
  auto e = kv::estimate_memory(dims, 1000, 512, DType::F16);
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->kv_bytes, 2ull * 2 * 2 * 64 * 512 * 2);
  // Scratch for a batch of 256 tokens (the default; n_ctx 512 is longer).
  // n_ff unknown counts as 4 * 256 = 1024. Q = 4 * 64 = 256, KV = 2 * 64 = 128
  // floats per token. The fullest moment is h, gate, up and their product:
  // 256 + 3 * 1024 = 3328 floats per token. The widest matrix input is n_ff.
  EXPECT_EQ(e->scratch.activation_bytes, 256ull * 3328 * 4);
  EXPECT_EQ(e->scratch.conversion_bytes, 256ull * 1024 * 4);
  // The prefill tiles: 8 threads x 64 bytes per value of the widest input.
  EXPECT_EQ(e->scratch.tile_bytes, 8ull * 64 * 1024);
  EXPECT_EQ(e->scratch_bytes, 256ull * 3328 * 4 + 256ull * 1024 * 4 + 8ull * 64 * 1024);
  EXPECT_EQ(e->total_bytes, 1000 + e->kv_bytes + e->scratch_bytes);
  // Q8_0: 34 bytes per 32 values; 100 tokens round up to 128 (blocks of 32).
  auto q = kv::estimate_memory(dims, 0, 100, DType::Q8_0);
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(q->kv_bytes, 2ull * 2 * 2 * (64 / 32 * 34) * 128);
  // A context of 100 tokens is a batch of 100.
  EXPECT_EQ(q->scratch_bytes, 100ull * 3328 * 4 + 100ull * 1024 * 4 + 8ull * 64 * 1024);
  EXPECT_FALSE(kv::estimate_memory(dims, 0, 0, DType::F16).ok());
  // n_ff = 768 known: h, gate, up, product = 256 + 3 * 768 = 2560 floats per token.
  const kv::ModelDims full{2, 256, 4, 2, 64, 768, 512};
  EXPECT_EQ(*kv::scratch_bytes(full, 512), 256ull * 2560 * 4 + 256ull * 768 * 4 + 8ull * 64 * 768);
  // Smaller batches scale it.
  EXPECT_EQ(*kv::scratch_bytes(full, 512, 32), 32ull * 2560 * 4 + 32ull * 768 * 4 + 8ull * 64 * 768);
  // Fused gate+up: h, gate+up (2 * 768), gate, up = 256 + 4 * 768 = 3328 floats.
  kv::ModelDims fused = full;
  fused.projections = kv::ProjectionLayout::Fused;
  EXPECT_EQ(kv::scratch_sizes(fused, 512)->activation_bytes, 256ull * 3328 * 4);
  // One token with a large vocabulary: the logits and their soft-capped copy
  // (2 * 32000 floats) outweigh the layer (2560 floats).
  const kv::ModelDims wide_vocab{2, 256, 4, 2, 64, 768, 32000};
  EXPECT_EQ(kv::scratch_sizes(wide_vocab, 1)->activation_bytes, 2ull * 32000 * 4);
  EXPECT_EQ(kv::scratch_sizes(wide_vocab, 1)->conversion_bytes, 768ull * 4);
  // Widths that are not whole cache lines round each tensor up to 64 bytes:
  // n_embd 20, 3 tokens: 240 bytes -> 256; gate, up, product of 4 * 20 floats
  // (n_ff unknown) over 3 tokens: 960 bytes each (already whole lines).
  const kv::ModelDims odd{1, 20, 1, 1, 20};
  EXPECT_EQ(kv::scratch_sizes(odd, 3)->activation_bytes, 256ull + 3 * 960);
  EXPECT_FALSE(kv::estimate_memory(dims, 0, 512, DType::Q4_0).ok());
}

TEST(ModelInfo, MissingShapeKeyNamesFileAndKey) {
  const auto path = std::filesystem::temp_directory_path() / "hearth_model_info_no_block_count.gguf";
  std::vector<gguf::KeyValue> meta{{"general.architecture", gguf::make_string("llama")},
                                   {"llama.embedding_length", gguf::make_uint32(256)}};
  ASSERT_TRUE(gguf::GgufWriter::write_file(path, meta, {}).ok());
  auto file = gguf::GgufFile::open(path);
  ASSERT_TRUE(file.ok());
  auto s = summarize_model(*file);
  std::filesystem::remove(path);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("hearth_model_info_no_block_count.gguf"), std::string::npos) << s.error().message;
  EXPECT_NE(s.error().message.find("llama.block_count"), std::string::npos) << s.error().message;
}

}  // namespace
}  // namespace hearth::tools

namespace hearth::tools {
namespace {

TEST(CheckContextMemory, RefusesAContextWhoseKvCacheDoesNotFitWithTheNumbers) {
  // stories260K at 4194304 tokens: 5 layers x 4 KV heads x 8 dims x 2 (K, V)
  // x 2 bytes (f16) x 4194304 positions = 2.5 GiB, by hand.
  const uint64_t kv = 5ull * 4 * 8 * 2 * 2 * 4194304;
  const uint64_t other = 2ull << 20;  // weights and scratch
  auto refused = check_context_memory(4194304, kv, other, (1ull << 30) + other);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::OutOfMemory);
  EXPECT_EQ(refused.error().message, "context of 4194304 tokens needs 2.5 GiB of KV cache; 1.0 GiB available");
  // Less memory than the weights alone: nothing is left for the cache.
  auto nothing = check_context_memory(4096, 1 << 20, 8ull << 30, 4ull << 30);
  ASSERT_FALSE(nothing.ok());
  EXPECT_EQ(nothing.error().message, "context of 4096 tokens needs 1 MiB of KV cache; 0 bytes available");
  EXPECT_TRUE(check_context_memory(4194304, kv, other, kv + other).ok());
  EXPECT_TRUE(check_context_memory(4194304, kv, other, 0).ok());  // unknown: the load's own check decides
}

}  // namespace
}  // namespace hearth::tools
