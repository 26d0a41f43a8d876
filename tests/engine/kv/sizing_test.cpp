#include <gtest/gtest.h>
#include <hearth/engine/kv/sizing.h>

namespace hearth::kv {
namespace {

// Llama 3.2 1B: 16 layers, 8 KV heads of 64; F16 is 2 bytes per element, so
// 2 * 16 * 8 * 64 * 2 = 32768 bytes per token (the published 32 KiB/token).
TEST(KvSizing, F16MatchesTheClosedForm) {
  auto bytes = kv_cache_bytes(16, 8, 64, 4096, DType::F16);
  ASSERT_TRUE(bytes.ok());
  EXPECT_EQ(*bytes, 32768ull * 4096);
}

// Q8_0 stores 32 elements in 34 bytes.
TEST(KvSizing, Q8_0CountsTheBlockScales) {
  auto bytes = kv_cache_bytes(2, 2, 64, 64, DType::Q8_0);
  ASSERT_TRUE(bytes.ok());
  EXPECT_EQ(*bytes, 2ull * 2 * 2 * (64 / 32 * 34) * 64);
}

TEST(KvSizing, ContextIsRoundedUpToWholeBlocks) {
  EXPECT_EQ(allocated_positions(1), kBlockTokens);
  EXPECT_EQ(allocated_positions(kBlockTokens), kBlockTokens);
  EXPECT_EQ(allocated_positions(kBlockTokens + 1), 2 * kBlockTokens);
  auto a = kv_cache_bytes(1, 1, 64, 33, DType::F16);
  auto b = kv_cache_bytes(1, 1, 64, 64, DType::F16);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(*a, *b);
}

TEST(KvSizing, RejectsBadInput) {
  EXPECT_FALSE(kv_cache_bytes(2, 2, 64, 64, DType::Q4_0).ok());
  EXPECT_FALSE(kv_cache_bytes(2, 2, 48, 64, DType::Q8_0).ok());  // 48 is not a multiple of 32
  EXPECT_FALSE(kv_cache_bytes(0, 2, 64, 64, DType::F16).ok());
  EXPECT_FALSE(kv_cache_bytes(1ll << 40, 1ll << 20, 64, 1ll << 20, DType::F16).ok());
}

}  // namespace
}  // namespace hearth::kv
