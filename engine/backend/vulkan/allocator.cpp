#include "hearth/engine/backend/vulkan/allocator.h"

#include "vk_struct.h"

#include <fmt/format.h>

#include "hearth/core/checked_math.h"

namespace hearth::vulkan {

DeviceAllocator::DeviceAllocator(const VulkanContext& ctx, AllocatorConfig config) : ctx_(ctx) {
  block_bytes_ = config.block_bytes;
  const uint64_t max_alloc = ctx.limits().max_allocation_size;
  if (max_alloc > 0 && block_bytes_ > max_alloc) block_bytes_ = max_alloc;
}

DeviceAllocator::~DeviceAllocator() {
  for (uint32_t i = 0; i < blocks_.size(); ++i) {
    if (blocks_[i]) release_block(i);
  }
}

bool DeviceAllocator::is_host_visible(uint32_t memory_type) const {
  return ctx_.memory_properties().memoryTypes[memory_type].propertyFlags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT;
}

Result<uint32_t> DeviceAllocator::pick_memory_type(uint32_t type_bits, MemoryUsage usage) const {
  const auto& mem = ctx_.memory_properties();
  VkMemoryPropertyFlags required = 0;
  VkMemoryPropertyFlags preferred = 0;
  switch (usage) {
    case MemoryUsage::DeviceLocal: preferred = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT; break;
    case MemoryUsage::Upload:
      required = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
      break;
    case MemoryUsage::Readback:
      required = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
      preferred = VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
      break;
  }
  // Device-local memory that is also host-visible is either unified memory
  // (fine) or a PCIe window (slow for the host to read), so a device-local
  // request takes it only when nothing else is device-local.
  if (usage == MemoryUsage::DeviceLocal) {
    for (uint32_t t = 0; t < mem.memoryTypeCount; ++t) {
      const auto flags = mem.memoryTypes[t].propertyFlags;
      if ((type_bits & (1u << t)) && (flags & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT) &&
          !(flags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT)) {
        return t;
      }
    }
  }
  std::optional<uint32_t> fallback;
  for (uint32_t t = 0; t < mem.memoryTypeCount; ++t) {
    if (!(type_bits & (1u << t))) continue;
    const auto flags = mem.memoryTypes[t].propertyFlags;
    if ((flags & required) != required) continue;
    if ((flags & preferred) == preferred) return t;
    if (!fallback) fallback = t;
  }
  if (fallback) return *fallback;
  return make_error(ErrorCode::Unsupported,
                    fmt::format("Vulkan: no memory type for usage {} (type bits {:#x})",
                                static_cast<int>(usage), type_bits));
}

Result<uint32_t> DeviceAllocator::new_block(uint32_t memory_type, uint64_t size) {
  auto info = vk_struct<VkMemoryAllocateInfo>(VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO);
  info.allocationSize = size;
  info.memoryTypeIndex = memory_type;
  auto block = std::make_unique<Block>();
  const VkResult r = vkAllocateMemory(ctx_.device(), &info, nullptr, &block->memory);
  if (r != VK_SUCCESS) {
    return make_error(ErrorCode::OutOfMemory,
                      fmt::format("Vulkan: allocating {} MiB of device memory failed: {}", size >> 20,
                                  to_string(r)));
  }
  block->size = size;
  block->memory_type = memory_type;
  block->free_ranges[0] = size;
  if (is_host_visible(memory_type)) {
    void* ptr = nullptr;
    if (vkMapMemory(ctx_.device(), block->memory, 0, VK_WHOLE_SIZE, 0, &ptr) != VK_SUCCESS) {
      vkFreeMemory(ctx_.device(), block->memory, nullptr);
      return make_error(ErrorCode::Internal, "Vulkan: vkMapMemory of a host-visible block failed");
    }
    block->mapped = static_cast<std::byte*>(ptr);
  }
  stats_.device_bytes += size;
  stats_.blocks += 1;
  for (uint32_t i = 0; i < blocks_.size(); ++i) {
    if (!blocks_[i]) {
      blocks_[i] = std::move(block);
      return i;
    }
  }
  blocks_.push_back(std::move(block));
  return static_cast<uint32_t>(blocks_.size() - 1);
}

void DeviceAllocator::release_block(uint32_t id) {
  Block& b = *blocks_[id];
  if (b.mapped) vkUnmapMemory(ctx_.device(), b.memory);
  vkFreeMemory(ctx_.device(), b.memory, nullptr);
  stats_.device_bytes -= b.size;
  stats_.blocks -= 1;
  blocks_[id].reset();
}

Result<Allocation> DeviceAllocator::allocate(const VkMemoryRequirements& req, MemoryUsage usage) {
  HEARTH_TRY(const uint32_t type, pick_memory_type(req.memoryTypeBits, usage));
  const uint64_t max_alloc = ctx_.limits().max_allocation_size;
  if (max_alloc > 0 && req.size > max_alloc) {
    return make_error(ErrorCode::LimitExceeded,
                      fmt::format("Vulkan: a {} MiB buffer exceeds the device's maxMemoryAllocationSize of {} MiB",
                                  req.size >> 20, max_alloc >> 20));
  }
  const uint64_t alignment = std::max<uint64_t>(req.alignment, 1);

  // First fit over the existing blocks of this memory type.
  for (uint32_t id = 0; id < blocks_.size(); ++id) {
    Block* b = blocks_[id].get();
    if (!b || b->memory_type != type) continue;
    for (auto it = b->free_ranges.begin(); it != b->free_ranges.end(); ++it) {
      const uint64_t start = *checked_align_up(it->first, alignment);
      const uint64_t end = it->first + it->second;
      if (start > end || end - start < req.size) continue;
      const uint64_t range_start = it->first;
      b->free_ranges.erase(it);
      if (start > range_start) b->free_ranges[range_start] = start - range_start;
      if (end > start + req.size) b->free_ranges[start + req.size] = end - (start + req.size);
      b->live += 1;
      stats_.used_bytes += req.size;
      stats_.allocations += 1;
      return Allocation{b->memory, start, req.size, b->mapped ? b->mapped + start : nullptr, type, id};
    }
  }

  // A new block: the standard size, or exactly the request when larger.
  const uint64_t size = std::max(block_bytes_, req.size);
  HEARTH_TRY(const uint32_t id, new_block(type, size));
  Block* b = blocks_[id].get();
  b->free_ranges.clear();
  if (size > req.size) b->free_ranges[req.size] = size - req.size;
  b->live = 1;
  stats_.used_bytes += req.size;
  stats_.allocations += 1;
  return Allocation{b->memory, 0, req.size, b->mapped, type, id};
}

void DeviceAllocator::free(const Allocation& a) {
  if (!a.valid() || a.block >= blocks_.size() || !blocks_[a.block]) return;
  Block& b = *blocks_[a.block];
  stats_.used_bytes -= a.size;
  stats_.allocations -= 1;
  if (--b.live == 0) {
    release_block(a.block);
    return;
  }
  // Insert and coalesce with the neighbours.
  uint64_t start = a.offset, size = a.size;
  auto next = b.free_ranges.lower_bound(start);
  if (next != b.free_ranges.end() && start + size == next->first) {
    size += next->second;
    next = b.free_ranges.erase(next);
  }
  if (next != b.free_ranges.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == start) {
      start = prev->first;
      size += prev->second;
      b.free_ranges.erase(prev);
    }
  }
  b.free_ranges[start] = size;
}

AllocatorStats DeviceAllocator::stats() const { return stats_; }

}  // namespace hearth::vulkan
