// The buffers the Vulkan backend hands out through Backend::allocate (KV
// caches, scratch): a device-local vulkan::Buffer that counts its bytes by
// usage, so MemoryUse reports what is live.
#pragma once

#include <hearth/engine/backend/backend.h>
#include <hearth/engine/backend/vulkan/buffer.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <utility>

namespace hearth::vulkan {

// Bytes of the live buffers handed out by allocate(), by usage. Shared with
// the buffers so one that outlives a memory_use() call still subtracts itself.
struct BufferCounters {
  std::array<std::atomic<uint64_t>, 3> bytes{};
  std::atomic<uint64_t>& of(backend::BufferUsage usage) { return bytes[static_cast<size_t>(usage)]; }
};

class VulkanBuffer final : public backend::Buffer {
 public:
  VulkanBuffer(vulkan::Buffer buffer, backend::BufferUsage usage, std::shared_ptr<BufferCounters> counters)
      : buffer_(std::move(buffer)), usage_(usage), counters_(std::move(counters)) {
    counters_->of(usage_) += buffer_.size();
  }
  ~VulkanBuffer() override { counters_->of(usage_) -= buffer_.size(); }
  VulkanBuffer(const VulkanBuffer&) = delete;
  VulkanBuffer& operator=(const VulkanBuffer&) = delete;
  size_t size() const override { return buffer_.size(); }
  backend::BufferUsage usage() const override { return usage_; }
  void* host_data() override { return buffer_.mapped(); }
  const vulkan::Buffer& buffer() const { return buffer_; }

 private:
  vulkan::Buffer buffer_;
  backend::BufferUsage usage_;
  std::shared_ptr<BufferCounters> counters_;
};

}  // namespace hearth::vulkan
