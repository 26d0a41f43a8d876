// What a first request's prompt writes is mapped before it comes: the KV
// cache's and the KV pool's first blocks of every layer, and the CPU
// backend's activation arena and conversion buffer. Fresh anonymous pages
// are cleared on first touch, and a fresh server's first prompt had spent a
// sixth of its time doing that. The rest of a large cache stays unmapped
// until it is used. mincore tells which pages are resident.
#include <gtest/gtest.h>
#include <hearth/engine/backend/cpu_backend.h>
#include <hearth/engine/kv/kv_cache.h>
#include <hearth/engine/kv/kv_pool.h>

#include <cstdint>
#include <cstdio>

#include "../core/resident_pages.h"

namespace hearth::runtime {
namespace {

using hearth::testing::page_bytes;
using hearth::testing::resident_pages;

constexpr size_t kMiB = size_t{1} << 20;
size_t pages(size_t bytes) { return bytes / page_bytes(); }

// Eight KV heads of 128 F16 values: 256 bytes a row, so 256 positions are
// 512 KiB of each layer's K (and of its V), and 16384 positions 32 MiB.
constexpr int64_t kHeads = 8, kHeadDim = 128, kRow = 256;

// The first 256 positions of a layer's K and of its V are resident.
void expect_first_pass_resident(const backend::KvView& v, int64_t layer) {
  const size_t first = 256 * kHeads * kRow;
  EXPECT_EQ(resident_pages(v.k, first), pages(first)) << "layer " << layer << " K";
  EXPECT_EQ(resident_pages(v.v, first), pages(first)) << "layer " << layer << " V";
}

TEST(FirstPassPages, KvCacheMapsTheFirstPassOfEveryLayersKAndV) {
  auto be = backend::make_cpu_backend({.threads = 1});
  kv::KvCacheConfig c;
  c.n_layer = 3;
  c.n_head_kv = kHeads;
  c.head_dim = kHeadDim;
  c.n_ctx = 16384;
  c.type = DType::F16;
  c.n_batch = 256;
  auto cache = kv::KvCache::create(*be, c);
  ASSERT_TRUE(cache.ok()) << cache.error().message;
  const size_t half = 16384 * kHeads * kRow;
  for (int64_t l = 0; l < c.n_layer; ++l) {
    const backend::KvView v = (*cache)->layer_view(l);
    ASSERT_NE(v.k, nullptr);
    expect_first_pass_resident(v, l);
    // The second half of the layer's K: 16 MiB past the first pass's pages.
    EXPECT_EQ(resident_pages(v.k + half / 2, half / 2), 0u) << "layer " << l << " K, positions 8192 on";
  }
}

TEST(FirstPassPages, KvPoolMapsTheBlocksItHandsOutFirst) {
  auto be = backend::make_cpu_backend({.threads = 1});
  kv::KvPoolConfig c;
  c.n_layer = 2;
  c.n_head_kv = kHeads;
  c.head_dim = kHeadDim;
  c.type = DType::F16;
  c.n_blocks = 512;  // 16384 positions
  c.max_seq_positions = 4096;
  c.first_pass_positions = 256;
  auto pool = kv::KvPool::create(*be, c);
  ASSERT_TRUE(pool.ok()) << pool.error().message;
  const size_t half = 16384 * kHeads * kRow;
  for (int64_t l = 0; l < c.n_layer; ++l) {
    const backend::KvView v = (*pool)->layer_view(l, nullptr, nullptr);
    ASSERT_NE(v.k, nullptr);
    expect_first_pass_resident(v, l);
    EXPECT_EQ(resident_pages(v.v + half / 2, half / 2), 0u) << "layer " << l << " V, blocks 256 on";
  }
  // And those are the blocks a first sequence gets.
  for (int32_t want = 0; want < 8; ++want) {
    auto b = (*pool)->allocate();
    ASSERT_TRUE(b.ok());
    EXPECT_EQ(*b, want);
  }
}

// Resident bytes of this process (/proc/self/statm's second field).
size_t resident_bytes() {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (!f) return 0;
  unsigned long size = 0, resident = 0;
  const int got = std::fscanf(f, "%lu %lu", &size, &resident);
  std::fclose(f);
  return got == 2 ? resident * page_bytes() : 0;
}

TEST(FirstPassPages, CpuScratchIsMappedWhenReserved) {
  auto be = backend::make_cpu_backend({.threads = 1});
  const size_t before = resident_bytes();
  ASSERT_GT(before, 0u);
  ASSERT_TRUE(be->reserve_scratch(backend::ScratchReservation{64 * kMiB, 16 * kMiB}).ok());
  const size_t after = resident_bytes();
  // At least the arena's 64 MiB (a fresh mapping at that size; the
  // conversion buffer may reuse heap pages the process had mapped before).
  EXPECT_GE(after, before + 60 * kMiB) << "resident " << before / kMiB << " -> " << after / kMiB << " MiB";
}

}  // namespace
}  // namespace hearth::runtime
