// Device scratch of the Vulkan kernels beyond the activation arena, sized per
// graph: the integer-dot products' 8-bit activations (one range per distinct
// product input, so Q, K and V share one quantization) and the partial
// results of attention split over positions (one range per node). Ranges are
// requested while a graph is placed, each with the graph nodes that use it,
// then laid out in one buffer: ranges in use at the same node get disjoint
// bytes, the others may share them (a prompt's 8-bit inputs would otherwise
// add up to hundreds of MB over a large model's layers; the command
// sequence puts a barrier between a range's last reader and its next
// writer). The buffer grows (with headroom) when a graph needs more and is
// never shrunk.
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
  // Asks for `bytes` for (tensor, use) at graph node `node` (requests come in
  // node order); a repeated request keeps the size and extends the range's
  // use to `node`.
  void request(const backend::Tensor* tensor, ScratchUse use, uint64_t bytes, uint64_t align, size_t node);
  // Lays the requested ranges out; call after the last request of a graph.
  void finish();
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
  struct Range {
    uint64_t offset = 0, size = 0, align = 1;
    size_t first = 0, last = 0;  // the graph nodes that use it
    size_t index = 0;            // order of the first request
  };
  std::map<std::pair<const backend::Tensor*, ScratchUse>, Range> ranges_;
  uint64_t bytes_ = 0;
  Buffer buffer_;
};

}  // namespace hearth::vulkan
