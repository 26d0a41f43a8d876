// The Vulkan backend keeps its last recording and submits it again when the
// next graph has the same signature. A KV buffer destroyed and re-created at
// the same host address must not look like the old one: the recording binds
// the old VkBuffer. Buffers carry a generation id per backend; a graph on the
// new buffer is recorded again, and its results match the CPU backend's
// scalar reference kernels on the same data.
#include <gtest/gtest.h>
#include <hearth/engine/backend/cpu_backend.h>
#include <hearth/engine/backend/vulkan/vulkan_backend.h>
#include <hearth/engine/kv/kv_cache.h>

#include <memory>
#include <numeric>
#include <random>
#include <vector>

#include "vulkan_test_env.h"
#include "../random_values.h"

namespace hearth::vulkan {
namespace {

using backend::Graph;
using backend::KvView;
using backend::Tensor;

constexpr int kHeadDim = 32, kHeads = 4, kHeadsKv = 2, kTokens = 24;

using backend::testing::random_vec;

struct Kv {
  std::vector<float> k, v;
};

Kv random_kv(unsigned seed) {
  const size_t n = static_cast<size_t>(kTokens) * kHeadsKv * kHeadDim;
  return {random_vec(n, seed), random_vec(n, seed + 1)};
}

Status store(backend::Backend& be, Kv& kv, std::vector<int32_t>& pos, const KvView& view) {
  Graph g;
  Tensor* kt = g.input(DType::F32, {kHeadsKv * kHeadDim, kTokens, 1, 1}, kv.k.data());
  Tensor* vt = g.input(DType::F32, {kHeadsKv * kHeadDim, kTokens, 1, 1}, kv.v.data());
  Tensor* ps = g.input(DType::I32, {kTokens, 1, 1, 1}, pos.data());
  g.kv_store(kt, vt, ps, view);
  // Every Vulkan graph reads an output back; this one is a token node.
  g.output = g.scale(g.input(DType::F32, {1, 1, 1, 1}, kv.k.data()), 1.0f);
  return be.compute(g);
}

std::vector<float> attend(backend::Backend& be, std::vector<float>& q, std::vector<int32_t>& pos,
                          const KvView& view) {
  Graph g;
  Tensor* qt = g.input(DType::F32, {kHeads * kHeadDim, kTokens, 1, 1}, q.data());
  Tensor* ps = g.input(DType::I32, {kTokens, 1, 1, 1}, pos.data());
  g.output = g.attention(qt, ps, view, backend::AttentionParams{kHeads, kHeadsKv, kHeadDim, 0.25f, 0.0f, 0});
  const auto st = be.compute(g);
  EXPECT_TRUE(st.ok()) << st.error().message;
  if (!st.ok()) return {};
  return {g.output->as<const float>(), g.output->as<const float>() + g.output->elements()};
}

// The layout of a one-layer F16 cache, taken from a real KvCache, with the
// device buffer swapped in (the Vulkan backend addresses it by offsets).
KvView device_view(const KvView& layout, backend::Buffer* buffer) {
  KvView v = layout;
  v.buffer = buffer;
  v.k = nullptr;
  v.v = nullptr;
  return v;
}

TEST(VulkanBufferGeneration, RecreatedBufferAtTheSameAddressIsRecordedAgain) {
  auto created = VulkanBackend::create(testing::test_config());
  ASSERT_TRUE(created.ok()) << created.error().message;
  VulkanBackend& vk = **created;
  auto cpu = backend::make_cpu_backend({1, backend::KernelChoice::Reference});
  auto cpu_cache = kv::KvCache::create(*cpu, kv::KvCacheConfig{1, kHeadsKv, kHeadDim, kTokens, DType::F16});
  ASSERT_TRUE(cpu_cache.ok()) << cpu_cache.error().message;
  const KvView layout = (*cpu_cache)->layer_view(0);
  const size_t bytes = layout.v_offset + (layout.v_offset - layout.k_offset);

  std::vector<int32_t> pos(kTokens);
  std::iota(pos.begin(), pos.end(), 0);
  auto q = random_vec(static_cast<size_t>(kTokens) * kHeads * kHeadDim, 3);
  Kv first = random_kv(10), second = random_kv(20);

  // Buffer A, with a neighbour allocated after it so that A's device range,
  // once free, is too small for the larger buffer B made below: B's memory
  // differs from A's, and a stale recording would miss B's contents.
  auto a = vk.allocate(bytes, backend::BufferUsage::KvCache);
  ASSERT_TRUE(a.ok()) << a.error().message;
  auto neighbour = vk.allocate(bytes, backend::BufferUsage::KvCache);
  ASSERT_TRUE(neighbour.ok());
  ASSERT_TRUE(store(vk, first, pos, device_view(layout, a->get())).ok());
  const uint32_t recordings = vk.stats().recordings;

  // Re-create until the new buffer object lands at A's address (the heap
  // hands the freed slot back; a few tries cover other allocations in
  // between). The misses stay alive so that each try gets a new slot.
  const backend::Buffer* old_address = a->get();
  a->reset();
  std::vector<std::unique_ptr<backend::Buffer>> misses;
  std::unique_ptr<backend::Buffer> b;
  for (int attempt = 0; attempt < 64 && !b; ++attempt) {
    auto next = vk.allocate(2 * bytes, backend::BufferUsage::KvCache);
    ASSERT_TRUE(next.ok()) << next.error().message;
    if (next->get() == old_address) {
      b = std::move(next).value();
    } else {
      misses.push_back(std::move(next).value());
    }
  }
  ASSERT_TRUE(b) << "no buffer was created at the freed buffer's address";

  // The same graph shape on B: recorded again, not replayed against A.
  const KvView on_b = device_view(layout, b.get());
  ASSERT_TRUE(store(vk, second, pos, on_b).ok());
  EXPECT_EQ(vk.stats().recordings, recordings + 1);
  const std::vector<float> got = attend(vk, q, pos, on_b);

  // The CPU's scalar reference kernels on the same data.
  ASSERT_TRUE(store(*cpu, second, pos, layout).ok());
  const std::vector<float> want = attend(*cpu, q, pos, layout);
  ASSERT_EQ(got.size(), want.size());
  ASSERT_FALSE(want.empty());
  for (size_t i = 0; i < want.size(); ++i) {
    // F16 cache on both sides; the tolerance covers summation order.
    ASSERT_NEAR(got[i], want[i], 1e-3) << "element " << i;
  }
}

}  // namespace
}  // namespace hearth::vulkan
