#include "hearth/engine/backend/vulkan/buffer.h"

#include "vk_struct.h"

#include <utility>

namespace hearth::vulkan {

Result<Buffer> Buffer::create(const VulkanContext& ctx, DeviceAllocator& allocator, uint64_t size,
                              MemoryUsage usage) {
  if (size == 0) return make_error(ErrorCode::InvalidArgument, "Vulkan: a buffer of 0 bytes was requested");
  auto info = vk_struct<VkBufferCreateInfo>(VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO);
  info.size = size;
  info.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
               VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  Buffer b;
  b.device_ = ctx.device();
  b.allocator_ = &allocator;
  b.size_ = size;
  VkResult r = vkCreateBuffer(ctx.device(), &info, nullptr, &b.buffer_);
  if (r != VK_SUCCESS) return vk_error(r, "vkCreateBuffer");
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(ctx.device(), b.buffer_, &req);
  // Descriptor offsets into this buffer must stay aligned, so the buffer's
  // start is aligned the same way.
  req.alignment = std::max<uint64_t>(req.alignment, ctx.limits().storage_offset_alignment);
  HEARTH_TRY(b.allocation_, allocator.allocate(req, usage));
  r = vkBindBufferMemory(ctx.device(), b.buffer_, b.allocation_.memory, b.allocation_.offset);
  if (r != VK_SUCCESS) return vk_error(r, "vkBindBufferMemory");
  b.generation_ = allocator.next_buffer_generation();
  return b;
}

void Buffer::reset() {
  if (buffer_ != VK_NULL_HANDLE) vkDestroyBuffer(device_, buffer_, nullptr);
  if (allocator_ && allocation_.valid()) allocator_->free(allocation_);
  buffer_ = VK_NULL_HANDLE;
  allocation_ = {};
  size_ = 0;
  generation_ = 0;
}

Buffer::~Buffer() { reset(); }

Buffer::Buffer(Buffer&& other) noexcept { *this = std::move(other); }

Buffer& Buffer::operator=(Buffer&& other) noexcept {
  if (this != &other) {
    reset();
    device_ = other.device_;
    allocator_ = other.allocator_;
    buffer_ = std::exchange(other.buffer_, VK_NULL_HANDLE);
    allocation_ = std::exchange(other.allocation_, Allocation{});
    size_ = std::exchange(other.size_, 0);
    generation_ = std::exchange(other.generation_, 0);
  }
  return *this;
}

}  // namespace hearth::vulkan
