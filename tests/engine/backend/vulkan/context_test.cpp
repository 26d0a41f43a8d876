// On a real Vulkan driver (lavapipe in CI): instance and device, memory
// accounting, the smoke dispatch and the pipeline cache file.
#include <hearth/engine/backend/vulkan/context.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "vulkan_test_env.h"

namespace hearth::vulkan {
namespace {

using testing::Gpu;
using testing::test_config;
using testing::test_instance;

TEST(VulkanContext, CreatesInstanceAndListsDevices) {
  auto devices = VulkanContext::list_devices(test_config());
  ASSERT_TRUE(devices.ok()) << devices.error().message;
  ASSERT_FALSE(devices->empty());
  for (const auto& d : *devices) {
    EXPECT_FALSE(d.name.empty());
    EXPECT_GE(d.api_version, (1u << 22));
  }
  auto ctx = VulkanContext::create(test_config());
  ASSERT_TRUE(ctx.ok()) << ctx.error().message;
  const auto& desc = (*ctx)->description();
  EXPECT_TRUE(desc.storage_16bit);
  EXPECT_TRUE(desc.has_compute_queue);
  EXPECT_GT((*ctx)->limits().max_allocation_size, 0u);
  const auto budget = (*ctx)->memory_budget(0);
  EXPECT_GT(budget.device_local_total, 0u);
  EXPECT_GT(budget.free_bytes(), 0u);
}

// Contexts opened on one instance share it, and it stays while any of them
// is open; a context without one makes, and later destroys, its own.
TEST(VulkanContext, ContextsShareTheInstanceTheyAreGiven) {
  auto made = VulkanInstance::create(ValidationLayers::Off);
  ASSERT_TRUE(made.ok()) << made.error().message;
  std::shared_ptr<VulkanInstance> instance = std::move(made).value();
  const VkInstance handle = instance->handle();
  VulkanConfig cfg = test_config();
  cfg.instance = instance;
  auto first = VulkanContext::create(cfg);
  auto second = VulkanContext::create(cfg);
  ASSERT_TRUE(first.ok()) << first.error().message;
  ASSERT_TRUE(second.ok()) << second.error().message;
  EXPECT_EQ((*first)->instance(), handle);
  EXPECT_EQ((*second)->instance(), handle);
  EXPECT_NE((*first)->device(), (*second)->device());
  const std::weak_ptr<VulkanInstance> watch = instance;
  // The owner lets go, then the first context closes: the second still
  // computes on the instance it holds.
  instance.reset();
  cfg.instance.reset();
  first->reset();
  auto gpu = std::make_unique<Gpu>();
  gpu->ctx = std::move(second).value();
  gpu->allocator = std::make_unique<DeviceAllocator>(*gpu->ctx, AllocatorConfig{16ull << 20});
  auto t = Transfer::create(*gpu->ctx, *gpu->allocator, 1ull << 20);
  ASSERT_TRUE(t.ok()) << t.error().message;
  gpu->transfer = std::move(t).value();
  gpu->pipelines = std::make_unique<PipelineSet>(*gpu->ctx, nullptr);
  gpu->kernels = std::make_unique<Kernels>(*gpu->ctx, *gpu->pipelines, default_tuning(*gpu->ctx));
  auto s = CommandSequence::create(*gpu->ctx, 8, ProfilingMode::Off);
  ASSERT_TRUE(s.ok()) << s.error().message;
  gpu->seq = std::move(s).value();
  const std::vector<float> a = {1.0f, 2.0f, 3.0f}, b = {10.0f, 20.0f, 30.0f};
  Buffer ba = gpu->upload(a), bb = gpu->upload(b), bd = gpu->buffer(12);
  gpu->run([&](Kernels& k, CommandSequence& seq) {
    return k.add(seq, BufferView::whole(ba), BufferView::whole(bb), BufferView::whole(bd), 3, 3);
  });
  EXPECT_EQ(gpu->download<float>(bd, 3), (std::vector<float>{11.0f, 22.0f, 33.0f}));
  EXPECT_FALSE(watch.expired());
  ba = {};
  bb = {};
  bd = {};
  gpu.reset();
  EXPECT_TRUE(watch.expired());  // gone with the last context on it
}

TEST(VulkanContext, WithoutAnInstanceAContextOpensItsOwn) {
  VulkanConfig own = test_config();
  own.instance.reset();
  auto alone = VulkanContext::create(own);
  ASSERT_TRUE(alone.ok()) << alone.error().message;
  EXPECT_NE((*alone)->instance(), test_instance()->handle());
}

// Many devices opened and closed on one instance, as an app does model
// after model, all open.
TEST(VulkanContext, ManyContextsOnOneInstance) {
  for (int i = 0; i < 40; ++i) {
    auto ctx = VulkanContext::create(test_config());
    ASSERT_TRUE(ctx.ok()) << "context " << i << ": " << ctx.error().message;
    EXPECT_EQ((*ctx)->instance(), test_instance()->handle());
  }
}

TEST(VulkanContext, PickingAMissingDeviceFallsBackWithAReason) {
  auto cfg = test_config();
  cfg.preference.name = "no such device name";
  auto ctx = VulkanContext::create(cfg);
  ASSERT_FALSE(ctx.ok());
  EXPECT_NE(ctx.error().message.find("running on CPU"), std::string::npos) << ctx.error().message;
}

// The smoke test: a trivial compute shader (add two arrays) on the
// device, output checked against the host's sums.
TEST(VulkanSmoke, AddTwoArrays) {
  auto gpu = Gpu::create();
  ASSERT_TRUE(gpu);
  const uint32_t n = 1000;
  std::vector<float> a(n), b(n);
  for (uint32_t i = 0; i < n; ++i) {
    a[i] = static_cast<float>(i) * 0.5f;
    b[i] = 3.0f - static_cast<float>(i);
  }
  Buffer ba = gpu->upload(a), bb = gpu->upload(b), bd = gpu->buffer(4 * n);
  gpu->run([&](Kernels& k, CommandSequence& s) {
    return k.add(s, BufferView::whole(ba), BufferView::whole(bb), BufferView::whole(bd), n, n);
  });
  const auto d = gpu->download<float>(bd, n);
  for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(d[i], a[i] + b[i]) << "at " << i;
}

TEST(VulkanMemory, SubAllocatesAndReturnsEverythingOnUnload) {
  auto gpu = Gpu::create();
  ASSERT_TRUE(gpu);
  auto& alloc = *gpu->allocator;
  const auto start = alloc.stats();
  const auto start_budget = alloc.budget();
  {
    std::vector<Buffer> weights;
    for (int i = 0; i < 10; ++i) weights.push_back(gpu->buffer(1u << 20));  // 10 x 1 MiB in 16 MiB blocks
    const auto mid = alloc.stats();
    EXPECT_EQ(mid.allocations, start.allocations + 10);
    // Ten 1 MiB buffers fit in one 16 MiB block (possibly the staging ring's,
    // on devices where upload and device-local memory are one type).
    EXPECT_LE(mid.blocks, start.blocks + 1);
    EXPECT_LE(mid.device_bytes, start.device_bytes + (16u << 20));
    EXPECT_GE(mid.used_bytes, start.used_bytes + 10 * (1u << 20));
    // A buffer larger than the block size gets a dedicated allocation.
    Buffer big = gpu->buffer(20u << 20);
    EXPECT_EQ(alloc.stats().blocks, mid.blocks + 1);
    EXPECT_EQ(alloc.stats().device_bytes, mid.device_bytes + (20u << 20));
    // Freed ranges are reused: free one in the middle, allocate again.
    weights[4].reset();
    const auto before = alloc.stats().device_bytes;
    weights[4] = gpu->buffer(1u << 20);
    EXPECT_EQ(alloc.stats().device_bytes, before);
    EXPECT_GT(alloc.budget().device_local_usage, start_budget.device_local_usage);
  }
  const auto end = alloc.stats();
  EXPECT_EQ(end.device_bytes, start.device_bytes);
  EXPECT_EQ(end.used_bytes, start.used_bytes);
  EXPECT_EQ(end.blocks, start.blocks);
  EXPECT_EQ(end.allocations, start.allocations);
  const auto end_budget = alloc.budget();
  if (end_budget.source == MemoryBudget::Source::Extension) {
    // The driver's own count includes other processes; allow 1 MiB slack.
    EXPECT_LE(end_budget.device_local_usage, start_budget.device_local_usage + (1u << 20));
  } else {
    EXPECT_EQ(end_budget.device_local_usage, start_budget.device_local_usage);
  }
}

TEST(VulkanMemory, RejectsABufferOverMaxAllocationSize) {
  auto gpu = Gpu::create();
  ASSERT_TRUE(gpu);
  const uint64_t too_big = gpu->ctx->limits().max_allocation_size + 4096;
  VkMemoryRequirements req{too_big, 256, ~0u};
  auto a = gpu->allocator->allocate(req, MemoryUsage::DeviceLocal);
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.error().message.find("maxMemoryAllocationSize"), std::string::npos);
}

TEST(VulkanTransfer, UploadAndDownloadLargerThanTheRing) {
  auto gpu = Gpu::create();
  ASSERT_TRUE(gpu);
  // 3 MiB through a 1 MiB ring (when the buffer is not host-visible).
  std::vector<uint32_t> data(3u << 18);
  std::mt19937 rng(7);
  for (auto& v : data) v = rng();
  Buffer b = gpu->upload(data);
  EXPECT_EQ(gpu->download<uint32_t>(b, data.size()), data);

  // The staged path, as on a discrete GPU: chunks alternate between the halves.
  auto staged = Transfer::create(*gpu->ctx, *gpu->allocator, 1u << 20, TransferPath::Staged);
  ASSERT_TRUE(staged.ok());
  Buffer c = gpu->buffer(data.size() * 4);
  ASSERT_TRUE((*staged)->upload(BufferView::whole(c), std::as_bytes(std::span(data))).ok());
  EXPECT_EQ((*staged)->bytes_staged(), data.size() * 4);
  std::vector<uint32_t> back(data.size());
  ASSERT_TRUE((*staged)->download(BufferView::whole(c), std::as_writable_bytes(std::span(back))).ok());
  EXPECT_EQ(back, data);
  // Zero-fill of a sub-range.
  ASSERT_TRUE((*staged)->zero(BufferView::whole(c).sub(4096, 8192)).ok());
  ASSERT_TRUE((*staged)->download(BufferView::whole(c), std::as_writable_bytes(std::span(back))).ok());
  for (size_t i = 0; i < back.size(); ++i) {
    const bool zeroed = i >= 1024 && i < 1024 + 2048;
    ASSERT_EQ(back[i], zeroed ? 0u : data[i]) << "at " << i;
  }
}

class PipelineCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) /
           ("hearth_pcache_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

TEST_F(PipelineCacheTest, WrittenReloadedAndValidatedByHeader) {
  const std::string path = (dir_ / "pipelines.bin").string();
  auto ctx = VulkanContext::create(test_config());
  ASSERT_TRUE(ctx.ok()) << ctx.error().message;
  {
    auto cache = PipelineCache::open(**ctx, path);
    ASSERT_TRUE(cache.ok());
    EXPECT_EQ((*cache)->load_result(), CacheLoad::NoFile);
    PipelineSet set(**ctx, cache->get());
    ASSERT_TRUE(set.get(ShaderId::binary_add, {3, 8}, 64).ok());
    ASSERT_TRUE(set.get(ShaderId::matvec_q4_k, {3, 12}, 32).ok());
    ASSERT_TRUE((*cache)->save().ok());
  }
  ASSERT_TRUE(std::filesystem::exists(path));
  std::ifstream in(path, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_GE(bytes.size(), 32u);
  EXPECT_TRUE(PipelineCache::validate_header(std::as_bytes(std::span(bytes)), (*ctx)->properties()).empty());

  auto again = PipelineCache::open(**ctx, path);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ((*again)->load_result(), CacheLoad::Loaded);
  PipelineSet set(**ctx, again->get());
  EXPECT_TRUE(set.get(ShaderId::binary_add, {3, 8}, 64).ok());
}

TEST_F(PipelineCacheTest, CorruptOrForeignFileIsIgnored) {
  auto ctx = VulkanContext::create(test_config());
  ASSERT_TRUE(ctx.ok()) << ctx.error().message;
  const std::string garbage = (dir_ / "garbage.bin").string();
  {
    std::ofstream out(garbage, std::ios::binary);
    out << "this is not a pipeline cache, just some bytes that are long enough";
  }
  auto c1 = PipelineCache::open(**ctx, garbage);
  ASSERT_TRUE(c1.ok());
  EXPECT_EQ((*c1)->load_result(), CacheLoad::IgnoredInvalid);
  EXPECT_NE((*c1)->load_message().find("garbage.bin"), std::string::npos);
  PipelineSet set(**ctx, c1->get());
  EXPECT_TRUE(set.get(ShaderId::binary_add, {3, 8}, 64).ok());

  // A valid header for another device (vendor id changed) is ignored too.
  const std::string foreign = (dir_ / "foreign.bin").string();
  ASSERT_TRUE((*c1)->save().ok());  // saving to garbage.bin replaced it with a valid cache
  std::filesystem::copy_file(garbage, foreign);
  {
    std::fstream f(foreign, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(8);
    const uint32_t other_vendor = (*ctx)->properties().vendorID ^ 0x1234u;
    f.write(reinterpret_cast<const char*>(&other_vendor), 4);
  }
  auto c2 = PipelineCache::open(**ctx, foreign);
  ASSERT_TRUE(c2.ok());
  EXPECT_EQ((*c2)->load_result(), CacheLoad::IgnoredInvalid);
  auto c3 = PipelineCache::open(**ctx, garbage);
  ASSERT_TRUE(c3.ok());
  EXPECT_EQ((*c3)->load_result(), CacheLoad::Loaded);

  // Truncated to less than a header.
  std::filesystem::resize_file(foreign, 10);
  auto c4 = PipelineCache::open(**ctx, foreign);
  ASSERT_TRUE(c4.ok());
  EXPECT_EQ((*c4)->load_result(), CacheLoad::IgnoredInvalid);
}

}  // namespace
}  // namespace hearth::vulkan
