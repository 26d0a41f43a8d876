// Shared set-up for the Vulkan tests: a context on whatever device the
// loader offers (lavapipe in CI, software devices allowed), plus helpers to
// move std::vectors in and out of device buffers.
#pragma once

#include <gtest/gtest.h>
#include <hearth/engine/backend/vulkan/allocator.h>
#include <hearth/engine/backend/vulkan/buffer.h>
#include <hearth/engine/backend/vulkan/command.h>
#include <hearth/engine/backend/vulkan/context.h>
#include <hearth/engine/backend/vulkan/instance.h>
#include <hearth/engine/backend/vulkan/kernels.h>
#include <hearth/engine/backend/vulkan/pipeline.h>
#include <hearth/engine/backend/vulkan/transfer.h>
#include <hearth/engine/quant/fp16.h>

#include <cstring>
#include <memory>
#include <span>
#include <vector>

namespace hearth::vulkan::testing {

// One Vulkan instance for the whole test program, as the app keeps one for
// its life (instance.h: some drivers stop creating instances after a few
// dozen create/destroy cycles in one process). Null when there is no
// driver: each context then makes its own and fails with the reason.
inline std::shared_ptr<VulkanInstance> test_instance() {
  static const std::shared_ptr<VulkanInstance> instance = [] {
    auto made = VulkanInstance::create(ValidationLayers::Off);
    return made.ok() ? std::move(made).value() : nullptr;
  }();
  return instance;
}

inline VulkanConfig test_config() {
  VulkanConfig c;
  c.instance = test_instance();
  c.requirements.software = SoftwareDevices::Allow;
  c.requirements.min_device_memory_bytes = 64ull << 20;
  return c;
}

// Everything a kernel test needs, created in order and destroyed in reverse.
struct Gpu {
  std::unique_ptr<VulkanContext> ctx;
  std::unique_ptr<DeviceAllocator> allocator;
  std::unique_ptr<Transfer> transfer;
  std::unique_ptr<PipelineSet> pipelines;
  std::unique_ptr<Kernels> kernels;
  std::unique_ptr<CommandSequence> seq;

  ~Gpu() {
    seq.reset();
    kernels.reset();
    pipelines.reset();
    transfer.reset();
    allocator.reset();
    ctx.reset();
  }

  // Fails the test (never skips) when no Vulkan device can be opened.
  static std::unique_ptr<Gpu> create(ProfilingMode profiling = ProfilingMode::Off) {
    auto g = std::make_unique<Gpu>();
    auto ctx = VulkanContext::create(test_config());
    EXPECT_TRUE(ctx.ok()) << (ctx.ok() ? "" : ctx.error().message);
    if (!ctx.ok()) return nullptr;
    g->ctx = std::move(ctx).value();
    g->allocator = std::make_unique<DeviceAllocator>(*g->ctx, AllocatorConfig{16ull << 20});
    auto t = Transfer::create(*g->ctx, *g->allocator, 1ull << 20);
    EXPECT_TRUE(t.ok());
    if (!t.ok()) return nullptr;
    g->transfer = std::move(t).value();
    g->pipelines = std::make_unique<PipelineSet>(*g->ctx, nullptr);
    g->kernels = std::make_unique<Kernels>(*g->ctx, *g->pipelines, default_tuning(*g->ctx));
    auto s = CommandSequence::create(*g->ctx, 64, profiling);
    EXPECT_TRUE(s.ok());
    if (!s.ok()) return nullptr;
    g->seq = std::move(s).value();
    return g;
  }

  Buffer buffer(uint64_t bytes, MemoryUsage usage = MemoryUsage::DeviceLocal) {
    auto b = Buffer::create(*ctx, *allocator, std::max<uint64_t>(bytes, 4), usage);
    EXPECT_TRUE(b.ok()) << (b.ok() ? "" : b.error().message);
    return b.ok() ? std::move(b).value() : Buffer{};
  }

  template <typename T>
  Buffer upload(const std::vector<T>& data) {
    Buffer b = buffer(data.size() * sizeof(T));
    auto st = transfer->upload(BufferView::whole(b), std::as_bytes(std::span(data)));
    EXPECT_TRUE(st.ok()) << (st.ok() ? "" : st.error().message);
    return b;
  }

  template <typename T>
  std::vector<T> download(const Buffer& b, size_t count) {
    std::vector<T> out(count);
    auto st = transfer->download(BufferView::whole(b), std::as_writable_bytes(std::span(out)));
    EXPECT_TRUE(st.ok()) << (st.ok() ? "" : st.error().message);
    return out;
  }

  // Records one op through `record`, runs it and waits.
  template <typename F>
  void run(F&& record) {
    ASSERT_TRUE(seq->begin().ok());
    auto st = record(*kernels, *seq);
    ASSERT_TRUE(st.ok()) << st.error().message;
    ASSERT_TRUE(seq->end().ok());
    auto sub = seq->submit_and_wait();
    ASSERT_TRUE(sub.ok()) << sub.error().message;
  }
};

// IEEE half <-> float for building test data (hearth_quant's conversions).
inline uint16_t to_half(float f) { return quant::fp32_to_fp16(f); }
inline float from_half(uint16_t h) { return quant::fp16_to_fp32(h); }

}  // namespace hearth::vulkan::testing
