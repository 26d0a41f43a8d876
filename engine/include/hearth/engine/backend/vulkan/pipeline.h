// Compute pipelines: one per (shader variant, workgroup size), created on
// first use from the embedded SPIR-V, with a VkPipelineCache that is saved
// to disk so the next start skips the driver's shader compilation.
#pragma once

#include <hearth/engine/backend/vulkan/context.h>
#include <hearth/shaders/shader_registry.h>

#include <compare>
#include <map>
#include <span>
#include <memory>
#include <string>

namespace hearth::vulkan {

using shaders::ShaderId;

enum class CacheLoad { NoFile, Loaded, IgnoredInvalid };

// VkPipelineCache backed by a file. A file whose header does not match this
// device and driver (or that is truncated or garbage) is ignored, never
// passed to the driver.
class PipelineCache {
 public:
  static Result<std::unique_ptr<PipelineCache>> open(const VulkanContext& ctx, std::string path);
  ~PipelineCache();
  PipelineCache(const PipelineCache&) = delete;
  PipelineCache& operator=(const PipelineCache&) = delete;

  VkPipelineCache handle() const { return cache_; }
  CacheLoad load_result() const { return load_; }
  const std::string& load_message() const { return load_message_; }  // why a file was ignored
  // Writes the cache (temp file + rename so a crash never leaves half a file).
  Status save() const;

  // Checks a cache blob's header against the device; empty string = valid.
  static std::string validate_header(std::span<const std::byte> blob, const VkPhysicalDeviceProperties& props);

 private:
  PipelineCache(const VulkanContext& ctx, std::string path) : ctx_(ctx), path_(std::move(path)) {}
  const VulkanContext& ctx_;
  std::string path_;
  VkPipelineCache cache_ = VK_NULL_HANDLE;
  CacheLoad load_ = CacheLoad::NoFile;
  std::string load_message_;
};

// What a pipeline layout needs: storage-buffer bindings 0..n-1 and the
// push-constant block size.
struct PipelineLayoutDesc {
  uint32_t storage_buffers = 0;
  uint32_t push_constant_bytes = 0;
};

// Specialization constants: 0 = workgroup size (every shader), 1 = a
// per-shader tuning value (rows per workgroup for matvec; ignored by others),
// 2 = a second one (activation columns for matvec; ignored by others).
struct Specialization {
  uint32_t workgroup_size = 64;
  uint32_t param = 1;
  uint32_t param2 = 1;
  auto operator<=>(const Specialization&) const = default;
};

struct Pipeline {
  VkPipeline pipeline = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
  PipelineLayoutDesc desc;
  uint32_t workgroup_size = 0;
  ShaderId shader{};
};

class PipelineSet {
 public:
  // `cache` may be null (no disk cache).
  PipelineSet(const VulkanContext& ctx, PipelineCache* cache) : ctx_(ctx), cache_(cache) {}
  ~PipelineSet();
  PipelineSet(const PipelineSet&) = delete;
  PipelineSet& operator=(const PipelineSet&) = delete;

  Result<const Pipeline*> get(ShaderId shader, const PipelineLayoutDesc& desc, Specialization spec);
  Result<const Pipeline*> get(ShaderId shader, const PipelineLayoutDesc& desc, uint32_t workgroup_size) {
    return get(shader, desc, Specialization{workgroup_size, 1, 1});
  }
  size_t created() const { return pipelines_.size(); }

 private:
  Result<VkDescriptorSetLayout> set_layout(uint32_t bindings);

  const VulkanContext& ctx_;
  PipelineCache* cache_;
  std::map<std::pair<ShaderId, Specialization>, std::unique_ptr<Pipeline>> pipelines_;
  std::map<uint32_t, VkDescriptorSetLayout> set_layouts_;
  std::map<std::pair<uint32_t, uint32_t>, VkPipelineLayout> layouts_;
};

}  // namespace hearth::vulkan
