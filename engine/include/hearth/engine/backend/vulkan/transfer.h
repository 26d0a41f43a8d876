// Host <-> device copies through a staging ring. The ring has two halves so
// the CPU fills one while the GPU copies the other; destinations that are
// host-visible (unified memory) are written in place with no staging copy.
#pragma once

#include <hearth/engine/backend/vulkan/buffer.h>

#include <array>
#include <span>

namespace hearth::vulkan {

// Auto writes host-visible destinations in place; Staged always goes through
// the ring (tests use it to exercise the discrete-GPU path on any device).
enum class TransferPath { Auto, Staged };

class Transfer {
 public:
  static Result<std::unique_ptr<Transfer>> create(const VulkanContext& ctx, DeviceAllocator& allocator,
                                                  uint64_t ring_bytes = 16ull << 20,
                                                  TransferPath path = TransferPath::Auto);
  ~Transfer();
  Transfer(const Transfer&) = delete;
  Transfer& operator=(const Transfer&) = delete;

  // Both return when the data has arrived.
  Status upload(const BufferView& dst, std::span<const std::byte> data);
  Status download(const BufferView& src, std::span<std::byte> out);
  // Fills with zeros (vkCmdFillBuffer); size must be a multiple of 4.
  Status zero(const BufferView& dst);

  uint64_t bytes_staged() const { return bytes_staged_; }  // went through the ring

 private:
  explicit Transfer(const VulkanContext& ctx) : ctx_(ctx) {}
  struct Slot {
    VkCommandBuffer cmd = VK_NULL_HANDLE;
    VkFence fence = VK_NULL_HANDLE;
    bool pending = false;
  };
  Status wait(Slot& slot);
  Status submit(Slot& slot);
  Status begin(Slot& slot);

  const VulkanContext& ctx_;
  Buffer ring_;
  uint64_t half_ = 0;
  VkCommandPool pool_ = VK_NULL_HANDLE;
  std::array<Slot, 2> slots_;
  uint64_t bytes_staged_ = 0;
  TransferPath path_ = TransferPath::Auto;
};

}  // namespace hearth::vulkan
