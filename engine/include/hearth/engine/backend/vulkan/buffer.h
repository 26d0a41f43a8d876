// A VkBuffer bound to a sub-allocation, and views of ranges inside buffers.
#pragma once

#include <hearth/engine/backend/vulkan/allocator.h>

#include <cstddef>
#include <cstdint>

namespace hearth::vulkan {

class Buffer {
 public:
  Buffer() = default;
  // Usable as a storage buffer and as a transfer source and destination.
  static Result<Buffer> create(const VulkanContext& ctx, DeviceAllocator& allocator, uint64_t size,
                               MemoryUsage usage);
  ~Buffer();
  Buffer(Buffer&& other) noexcept;
  Buffer& operator=(Buffer&& other) noexcept;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  VkBuffer handle() const { return buffer_; }
  uint64_t size() const { return size_; }
  // Host pointer when the memory is host-visible (always for Upload/Readback;
  // for DeviceLocal on unified-memory devices, which lets uploads skip staging).
  std::byte* mapped() const { return allocation_.mapped; }
  bool valid() const { return buffer_ != VK_NULL_HANDLE; }
  // Unique per allocator for the buffer's lifetime (0: no buffer). Identifies
  // the buffer in recording signatures where its address could be reused.
  uint64_t generation() const { return generation_; }
  void reset();

 private:
  VkDevice device_ = VK_NULL_HANDLE;
  DeviceAllocator* allocator_ = nullptr;
  VkBuffer buffer_ = VK_NULL_HANDLE;
  Allocation allocation_;
  uint64_t size_ = 0;
  uint64_t generation_ = 0;
};

// A byte range of a buffer, as bound to a shader or used by a copy.
struct BufferView {
  const Buffer* buffer = nullptr;
  uint64_t offset = 0;
  uint64_t size = 0;  // bytes

  static BufferView whole(const Buffer& b) { return {&b, 0, b.size()}; }
  BufferView sub(uint64_t off, uint64_t bytes) const { return {buffer, offset + off, bytes}; }
  bool overlaps(const BufferView& other) const {
    return buffer == other.buffer && offset < other.offset + other.size && other.offset < offset + size;
  }
};

}  // namespace hearth::vulkan
