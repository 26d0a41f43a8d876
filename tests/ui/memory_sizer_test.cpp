#include "engine/memory_sizer.h"

#include <gtest/gtest.h>

namespace hearth::ui {
namespace {

// Llama 3.2 1B: 16 layers, 8 KV heads of 64 dims. Its F16 cache at 4096 tokens
// is the widely quoted 128 MiB: 2 * 16 * 8 * 64 * 4096 * 2 bytes.
ModelShape llama_1b() {
  ModelShape s;
  s.n_layer = 16;
  s.n_head_kv = 8;
  s.head_dim = 64;
  s.n_embd = 2048;
  s.n_vocab = 128256;
  s.n_head = 32;
  s.n_ff = 8192;
  s.weights_bytes = 807'000'000;
  return s;
}

TEST(EngineMemorySizer, F16CacheMatchesTheFormula) {
  const auto b = EngineMemorySizer().estimate(llama_1b(), 4096, settings::KvCacheType::F16);
  EXPECT_EQ(b.kv_bytes, 2ull * 16 * 8 * 64 * 4096 * 2);
  EXPECT_EQ(b.kv_bytes, 128ull * 1024 * 1024);
  EXPECT_EQ(b.weights_bytes, 807'000'000u);
}

TEST(EngineMemorySizer, Q8CacheStores34BytesPer32Values) {
  const auto b = EngineMemorySizer().estimate(llama_1b(), 4096, settings::KvCacheType::Q8_0);
  EXPECT_EQ(b.kv_bytes, 2ull * 16 * 8 * (64 / 32 * 34) * 4096);
}

TEST(EngineMemorySizer, ContextRoundsUpToWholeCacheBlocks) {
  // 1000 positions are allocated as 32 blocks of 32 = 1024.
  const auto b = EngineMemorySizer().estimate(llama_1b(), 1000, settings::KvCacheType::F16);
  EXPECT_EQ(b.kv_bytes, 2ull * 16 * 8 * 64 * 1024 * 2);
}

TEST(EngineMemorySizer, TotalIsTheSumAndScratchIsTheEnginesBatch) {
  const auto b = EngineMemorySizer().estimate(llama_1b(), 2048, settings::KvCacheType::F16);
  // A batch of 256 tokens at its fullest moment holds the residual stream,
  // gate, up and their product: (2048 + 3 * 8192) floats per token; plus one
  // n_ff-wide row per token converted for the down projection.
  EXPECT_EQ(b.scratch_bytes, 256ull * (2048 + 3 * 8192) * 4 + 256ull * 8192 * 4 + 8ull * 64 * 8192);
  EXPECT_EQ(b.total(), b.weights_bytes + b.kv_bytes + b.scratch_bytes);
}

TEST(EngineMemorySizer, InvalidShapeGivesNoKvBytes) {
  ModelShape s;  // all zero: no model described
  EXPECT_EQ(EngineMemorySizer().estimate(s, 4096, settings::KvCacheType::F16).kv_bytes, 0u);
}

}  // namespace
}  // namespace hearth::ui
