#include <gtest/gtest.h>
#include <hearth/engine/kv/sizing.h>

#include <algorithm>
#include <vector>

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

// Gemma 2 2B: 26 layers (the even ones windowed, 4096), 4 KV heads of 256,
// F16: 2 * 4 * 256 * 2 = 4096 bytes per position per layer. With batches of
// 256 a ring must hold 4096 + 256 - 1 = 4351 live positions; starting at the
// last position of a block they touch ceil((31 + 4351) / 32) = 137 blocks,
// 4384 positions. At n_ctx 8192: 13 * 4384 + 13 * 8192 positions.
TEST(KvSizing, WindowedLayersHoldTheWindowAndOneBatch) {
  EXPECT_EQ(windowed_positions(8192, 4096, 256), 4384);
  EXPECT_EQ(layer_positions(8192, 4096, 256, WindowedLayers::Ring), 4384);
  EXPECT_EQ(layer_positions(8192, 0, 256, WindowedLayers::Ring), 8192);
  EXPECT_EQ(layer_positions(8192, 4096, 256, WindowedLayers::Full), 8192);
  // Decoding only: 4096 live positions touch at most 129 blocks.
  EXPECT_EQ(windowed_positions(8192, 4096, 1), 129 * 32);
  // Never more than the context: a window as long as it, or a ring rounded past it.
  EXPECT_EQ(windowed_positions(2048, 4096, 256), 2048);
  EXPECT_EQ(windowed_positions(100, 50, 256), 128);  // 50 + 100 - 1 live: 6 blocks > 4

  std::vector<int32_t> windows(26, 0);
  for (size_t l = 0; l < windows.size(); l += 2) windows[l] = 4096;
  auto ring = kv_cache_bytes(26, 4, 256, 8192, DType::F16, windows, 256, WindowedLayers::Ring);
  ASSERT_TRUE(ring.ok()) << ring.error().message;
  EXPECT_EQ(*ring, 4096ull * (13 * 4384 + 13 * 8192));
  auto full = kv_cache_bytes(26, 4, 256, 8192, DType::F16, windows, 256, WindowedLayers::Full);
  ASSERT_TRUE(full.ok());
  EXPECT_EQ(*full, *kv_cache_bytes(26, 4, 256, 8192, DType::F16));
  auto none = kv_cache_bytes(26, 4, 256, 8192, DType::F16, {}, 256, WindowedLayers::Ring);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(*none, *full);

  EXPECT_FALSE(kv_cache_bytes(26, 4, 256, 8192, DType::F16, std::vector<int32_t>(25, 0), 256,
                              WindowedLayers::Ring).ok());
  EXPECT_FALSE(kv_cache_bytes(2, 4, 256, 8192, DType::F16, std::vector<int32_t>{-1, 0}, 256,
                              WindowedLayers::Ring).ok());
}

// The ring size against a direct count: for every start of a batch of n
// positions, the blocks of the keys the batch sees (p0 - window + 1 ..
// p0 + n - 1) fit in the ring, and some start needs every block of it.
TEST(KvSizing, RingIsTheMostBlocksABatchAndItsWindowTouch) {
  for (int64_t window : {1, 5, 31, 32, 33, 100}) {
    for (int64_t n : {1, 2, 16, 32, 64}) {
      const int64_t ring_blocks = windowed_positions(1 << 20, window, n) / kBlockTokens;
      int64_t most = 0;
      for (int64_t p0 = 0; p0 < 4 * kBlockTokens + window; ++p0) {
        const int64_t first = std::max<int64_t>(0, p0 - window + 1), last = p0 + n - 1;
        most = std::max(most, last / kBlockTokens - first / kBlockTokens + 1);
      }
      EXPECT_EQ(most, ring_blocks) << "window " << window << " batch " << n;
    }
  }
}

}  // namespace
}  // namespace hearth::kv
