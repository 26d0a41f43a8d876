// Sub-allocation of buffers from a few large device allocations: drivers
// limit the number of vkAllocateMemory calls and each has a large fixed cost.
// Blocks never exceed maxMemoryAllocationSize; a block that becomes empty is
// returned to the driver at once, so unloading a model gives the VRAM back.
#pragma once

#include <hearth/engine/backend/vulkan/context.h>

#include <cstdint>
#include <map>
#include <memory>
#include <vector>

namespace hearth::vulkan {

enum class MemoryUsage {
  DeviceLocal,  // weights, KV cache, scratch: fastest for the GPU
  Upload,       // host writes, GPU reads (staging, small per-token inputs)
  Readback,     // GPU writes, host reads (logits); cached when possible
};

struct Allocation {
  VkDeviceMemory memory = VK_NULL_HANDLE;
  uint64_t offset = 0;
  uint64_t size = 0;
  std::byte* mapped = nullptr;  // host pointer when the memory is host-visible
  uint32_t memory_type = 0;
  uint32_t block = 0;           // allocator's block id
  bool valid() const { return memory != VK_NULL_HANDLE; }
};

struct AllocatorStats {
  uint64_t device_bytes = 0;  // sum of live vkAllocateMemory sizes
  uint64_t used_bytes = 0;    // bytes handed out to buffers
  uint32_t blocks = 0;
  uint32_t allocations = 0;
};

struct AllocatorConfig {
  uint64_t block_bytes = 256ull << 20;  // capped by maxMemoryAllocationSize
};

class DeviceAllocator {
 public:
  explicit DeviceAllocator(const VulkanContext& ctx, AllocatorConfig config = {});
  ~DeviceAllocator();
  DeviceAllocator(const DeviceAllocator&) = delete;
  DeviceAllocator& operator=(const DeviceAllocator&) = delete;

  Result<Allocation> allocate(const VkMemoryRequirements& requirements, MemoryUsage usage);
  void free(const Allocation& allocation);

  AllocatorStats stats() const;
  // Device-local memory free for this process (budget extension or estimate).
  MemoryBudget budget() const { return ctx_.memory_budget(stats_.device_bytes); }
  uint64_t block_bytes() const { return block_bytes_; }
  bool is_host_visible(uint32_t memory_type) const;
  // A new id for a buffer made from this allocator, never handed out twice
  // by it. Recordings key on it: a buffer destroyed and re-created can land
  // at the same host address (and the same VkBuffer handle value), never at
  // the same generation.
  uint64_t next_buffer_generation() { return ++buffer_generations_; }

 private:
  struct Block {
    VkDeviceMemory memory = VK_NULL_HANDLE;
    uint64_t size = 0;
    uint32_t memory_type = 0;
    std::byte* mapped = nullptr;
    std::map<uint64_t, uint64_t> free_ranges;  // offset -> size, coalesced
    uint32_t live = 0;
  };

  Result<uint32_t> pick_memory_type(uint32_t type_bits, MemoryUsage usage) const;
  Result<uint32_t> new_block(uint32_t memory_type, uint64_t size);
  void release_block(uint32_t id);

  const VulkanContext& ctx_;
  uint64_t block_bytes_ = 0;
  std::vector<std::unique_ptr<Block>> blocks_;  // null slots are released blocks
  AllocatorStats stats_;
  uint64_t buffer_generations_ = 0;
};

}  // namespace hearth::vulkan
