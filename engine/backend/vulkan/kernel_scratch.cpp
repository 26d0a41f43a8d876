#include "kernel_scratch.h"

#include <fmt/format.h>
#include <hearth/engine/backend/activation_plan.h>

#include <algorithm>
#include <vector>

namespace hearth::vulkan {

void KernelScratch::request(const backend::Tensor* tensor, ScratchUse use, uint64_t bytes, uint64_t align,
                            size_t node) {
  const auto [it, added] = ranges_.try_emplace({tensor, use});
  Range& r = it->second;
  if (added) {
    r.size = std::max<uint64_t>(bytes, 4);
    r.align = std::max<uint64_t>(align, 1);
    r.first = node;
    r.index = ranges_.size() - 1;
  }
  r.last = node;
}

void KernelScratch::finish() {
  // Spans in request order (a graph of the same shape gets the same layout,
  // so its recording is reused); one alignment for all, the strictest asked.
  std::vector<Range*> by_request(ranges_.size());
  for (auto& [key, r] : ranges_) by_request[r.index] = &r;
  std::vector<backend::NodeSpan> spans;
  spans.reserve(by_request.size());
  uint64_t align = 1;
  for (const Range* r : by_request) {
    spans.push_back({r->first, r->last, r->size});
    align = std::max(align, r->align);
  }
  const std::vector<uint64_t> offsets = backend::pack_node_spans(spans, align, bytes_);
  for (size_t i = 0; i < by_request.size(); ++i) by_request[i]->offset = offsets[i];
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
  return BufferView{&buffer_, it->second.offset, it->second.size};
}

}  // namespace hearth::vulkan
