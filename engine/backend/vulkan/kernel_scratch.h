// Device scratch of the Vulkan kernels beyond the activation arena, sized per
// graph: the integer-dot matvec's 8-bit activations (one range per distinct
// product input, so Q, K and V share one quantization) and the partial
// results of attention split over positions (one range per node). Ranges are
// requested while a graph is placed, then laid out in one buffer that grows
// (with headroom) when a graph needs more; the buffer is never shrunk.
#pragma once

#include <hearth/engine/backend/graph.h>
#include <hearth/engine/backend/vulkan/allocator.h>
#include <hearth/engine/backend/vulkan/buffer.h>

#include <cstdint>
#include <map>
#include <utility>

namespace hearth::vulkan {

enum class ScratchUse { QuantizedInput, AttentionPartials };

class KernelScratch {
 public:
  // Starts a graph: forgets every range (the buffer stays).
  void begin() { ranges_.clear(); bytes_ = 0; }
  // Asks for `bytes` for (tensor, use); a repeated request keeps the first.
  void request(const backend::Tensor* tensor, ScratchUse use, uint64_t bytes, uint64_t align);
  // Whether ensure() will replace the buffer: a recording that binds the
  // old one must be dropped first.
  bool needs_growth() const { return bytes_ > buffer_.size(); }
  // Makes the buffer hold every requested range.
  Status ensure(const VulkanContext& ctx, DeviceAllocator& allocator);
  // The range of (tensor, use); an Internal error when it was not requested.
  Result<BufferView> view(const backend::Tensor* tensor, ScratchUse use) const;
  bool has(const backend::Tensor* tensor, ScratchUse use) const { return ranges_.count({tensor, use}) != 0; }
  uint64_t buffer_bytes() const { return buffer_.size(); }
  void release() { buffer_.reset(); }

 private:
  std::map<std::pair<const backend::Tensor*, ScratchUse>, std::pair<uint64_t, uint64_t>> ranges_;  // offset, size
  uint64_t bytes_ = 0;
  Buffer buffer_;
};

}  // namespace hearth::vulkan
