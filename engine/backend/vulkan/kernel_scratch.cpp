#include "kernel_scratch.h"

#include <fmt/format.h>
#include <hearth/core/checked_math.h>

#include <algorithm>

namespace hearth::vulkan {

void KernelScratch::request(const backend::Tensor* tensor, ScratchUse use, uint64_t bytes, uint64_t align) {
  if (ranges_.count({tensor, use})) return;
  const uint64_t offset = *checked_align_up(bytes_, align);
  const uint64_t size = std::max<uint64_t>(bytes, 4);
  ranges_[{tensor, use}] = {offset, size};
  bytes_ = offset + size;
}

Status KernelScratch::ensure(const VulkanContext& ctx, DeviceAllocator& allocator) {
  if (!needs_growth()) return {};
  buffer_.reset();
  HEARTH_TRY(buffer_, Buffer::create(ctx, allocator, bytes_ + bytes_ / 2, MemoryUsage::DeviceLocal));
  return {};
}

Result<BufferView> KernelScratch::view(const backend::Tensor* tensor, ScratchUse use) const {
  const auto it = ranges_.find({tensor, use});
  if (it == ranges_.end() || !buffer_.valid()) {
    return make_error(ErrorCode::Internal, fmt::format("Vulkan: no kernel scratch placed for '{}'", tensor->name));
  }
  return BufferView{&buffer_, it->second.first, it->second.second};
}

}  // namespace hearth::vulkan
