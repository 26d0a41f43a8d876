#include "hearth/engine/backend/vulkan/transfer.h"

#include "vk_struct.h"

#include <fmt/format.h>

#include <cstring>

namespace hearth::vulkan {

Result<std::unique_ptr<Transfer>> Transfer::create(const VulkanContext& ctx, DeviceAllocator& allocator,
                                                   uint64_t ring_bytes, TransferPath path) {
  std::unique_ptr<Transfer> t(new Transfer(ctx));
  t->path_ = path;
  HEARTH_TRY(t->ring_, Buffer::create(ctx, allocator, ring_bytes, MemoryUsage::Upload));
  t->half_ = ring_bytes / 2;
  auto pool = vk_struct<VkCommandPoolCreateInfo>(VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO);
  pool.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pool.queueFamilyIndex = ctx.queue_family();
  VkResult r = vkCreateCommandPool(ctx.device(), &pool, nullptr, &t->pool_);
  if (r != VK_SUCCESS) return vk_error(r, "vkCreateCommandPool");
  for (auto& slot : t->slots_) {
    auto alloc = vk_struct<VkCommandBufferAllocateInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO);
    alloc.commandPool = t->pool_;
    alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    alloc.commandBufferCount = 1;
    r = vkAllocateCommandBuffers(ctx.device(), &alloc, &slot.cmd);
    if (r != VK_SUCCESS) return vk_error(r, "vkAllocateCommandBuffers");
    auto fence = vk_struct<VkFenceCreateInfo>(VK_STRUCTURE_TYPE_FENCE_CREATE_INFO);
    r = vkCreateFence(ctx.device(), &fence, nullptr, &slot.fence);
    if (r != VK_SUCCESS) return vk_error(r, "vkCreateFence");
  }
  return t;
}

Transfer::~Transfer() {
  for (auto& slot : slots_) {
    if (slot.pending) (void)wait(slot);
    if (slot.fence) vkDestroyFence(ctx_.device(), slot.fence, nullptr);
  }
  if (pool_) vkDestroyCommandPool(ctx_.device(), pool_, nullptr);
}

Status Transfer::wait(Slot& slot) {
  if (!slot.pending) return {};
  const VkResult r = vkWaitForFences(ctx_.device(), 1, &slot.fence, VK_TRUE, UINT64_MAX);
  slot.pending = false;
  if (r != VK_SUCCESS) return vk_error(r, "vkWaitForFences (transfer)");
  vkResetFences(ctx_.device(), 1, &slot.fence);
  return {};
}

Status Transfer::begin(Slot& slot) {
  HEARTH_CHECK(wait(slot));
  vkResetCommandBuffer(slot.cmd, 0);
  auto info = vk_struct<VkCommandBufferBeginInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO);
  info.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  const VkResult r = vkBeginCommandBuffer(slot.cmd, &info);
  if (r != VK_SUCCESS) return vk_error(r, "vkBeginCommandBuffer (transfer)");
  return {};
}

Status Transfer::submit(Slot& slot) {
  // Make the copy visible to later compute work and host reads.
  auto barrier = vk_struct<VkMemoryBarrier>(VK_STRUCTURE_TYPE_MEMORY_BARRIER);
  barrier.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
  barrier.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_HOST_READ_BIT;
  vkCmdPipelineBarrier(slot.cmd, VK_PIPELINE_STAGE_TRANSFER_BIT,
                       VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &barrier, 0,
                       nullptr, 0, nullptr);
  VkResult r = vkEndCommandBuffer(slot.cmd);
  if (r != VK_SUCCESS) return vk_error(r, "vkEndCommandBuffer (transfer)");
  auto submit = vk_struct<VkSubmitInfo>(VK_STRUCTURE_TYPE_SUBMIT_INFO);
  submit.commandBufferCount = 1;
  submit.pCommandBuffers = &slot.cmd;
  r = vkQueueSubmit(ctx_.queue(), 1, &submit, slot.fence);
  if (r != VK_SUCCESS) return vk_error(r, "vkQueueSubmit (transfer)");
  slot.pending = true;
  return {};
}

Status Transfer::upload(const BufferView& dst, std::span<const std::byte> data) {
  if (data.size() > dst.size) {
    return make_error(ErrorCode::InvalidArgument,
                      fmt::format("Vulkan upload: {} bytes into a {}-byte range", data.size(), dst.size));
  }
  std::byte* p = path_ == TransferPath::Auto ? dst.buffer->mapped() : nullptr;
  if (p != nullptr) {
    // The destination is host-visible (unified memory): no staging copy. The
    // caller's next submit makes host writes visible to the device.
    std::memcpy(p + dst.offset, data.data(), data.size());
    return {};
  }
  uint64_t done = 0;
  size_t which = 0;
  while (done < data.size()) {
    Slot& slot = slots_[which];
    HEARTH_CHECK(begin(slot));  // waits until this half of the ring is free
    const uint64_t n = std::min<uint64_t>(half_, data.size() - done);
    std::memcpy(ring_.mapped() + which * half_, data.data() + done, n);
    VkBufferCopy region{which * half_, dst.offset + done, n};
    vkCmdCopyBuffer(slot.cmd, ring_.handle(), dst.buffer->handle(), 1, &region);
    HEARTH_CHECK(submit(slot));
    done += n;
    bytes_staged_ += n;
    which ^= 1;
  }
  for (auto& slot : slots_) HEARTH_CHECK(wait(slot));
  return {};
}

Status Transfer::download(const BufferView& src, std::span<std::byte> out) {
  if (out.size() > src.size) {
    return make_error(ErrorCode::InvalidArgument,
                      fmt::format("Vulkan download: {} bytes from a {}-byte range", out.size(), src.size));
  }
  const std::byte* p = path_ == TransferPath::Auto ? src.buffer->mapped() : nullptr;
  if (p != nullptr) {
    std::memcpy(out.data(), p + src.offset, out.size());
    return {};
  }
  uint64_t done = 0;
  while (done < out.size()) {
    Slot& slot = slots_[0];
    HEARTH_CHECK(begin(slot));
    const uint64_t n = std::min<uint64_t>(half_, out.size() - done);
    VkBufferCopy region{src.offset + done, 0, n};
    vkCmdCopyBuffer(slot.cmd, src.buffer->handle(), ring_.handle(), 1, &region);
    HEARTH_CHECK(submit(slot));
    HEARTH_CHECK(wait(slot));
    std::memcpy(out.data() + done, ring_.mapped(), n);
    done += n;
  }
  return {};
}

Status Transfer::zero(const BufferView& dst) {
  if (dst.size % 4 != 0) {
    return make_error(ErrorCode::InvalidArgument, fmt::format("Vulkan zero: {} bytes is not a multiple of 4", dst.size));
  }
  Slot& slot = slots_[0];
  HEARTH_CHECK(begin(slot));
  vkCmdFillBuffer(slot.cmd, dst.buffer->handle(), dst.offset, dst.size, 0);
  HEARTH_CHECK(submit(slot));
  return wait(slot);
}

}  // namespace hearth::vulkan
