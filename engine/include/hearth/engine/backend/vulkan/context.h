// The Vulkan instance, the chosen device and its compute queue. Everything
// else in the backend (allocator, pipelines, command sequences) borrows a
// context; the context outlives them.
#pragma once

#include <hearth/engine/backend/vulkan/config.h>
#include <hearth/engine/backend/vulkan/device_selection.h>
#include <hearth/engine/backend/vulkan/instance.h>
#include <hearth/core/log.h>
#include <hearth/core/result.h>
#include <vulkan/vulkan.h>

#include <memory>
#include <vector>

namespace hearth::vulkan {

// Free device memory as the app shows it. With VK_EXT_memory_budget the
// numbers are the driver's (all processes); without it they are the heap
// size minus what this process allocated.
struct MemoryBudget {
  enum class Source { Extension, Estimate };
  Source source = Source::Estimate;
  uint64_t device_local_total = 0;
  uint64_t device_local_budget = 0;  // what this process may use
  uint64_t device_local_usage = 0;   // what this process uses
  uint64_t free_bytes() const {
    return device_local_budget > device_local_usage ? device_local_budget - device_local_usage : 0;
  }
};

struct DeviceLimits {
  uint64_t max_allocation_size = 0;          // maxMemoryAllocationSize
  uint64_t max_storage_buffer_range = 0;     // one descriptor binding's size
  uint64_t storage_offset_alignment = 0;     // minStorageBufferOffsetAlignment
  uint64_t non_coherent_atom_size = 0;
  uint32_t max_workgroup_size = 0;           // maxComputeWorkGroupSize[0]
  uint32_t max_workgroup_invocations = 0;
  uint32_t max_workgroup_count[3] = {0, 0, 0};
  uint32_t max_shared_memory = 0;
  uint32_t max_push_constants = 0;
  float timestamp_period_ns = 0;             // 0 = the queue has no timestamps
};

class VulkanContext {
 public:
  // Describes every physical device of config.instance (or of an instance
  // of its own when that is unset) and opens the one select_device()
  // picks. When none is usable the error message is the fallback line for
  // the user ("Vulkan: ...; running on CPU").
  static Result<std::unique_ptr<VulkanContext>> create(const VulkanConfig& config, Logger logger = {});

  // Describes the devices without opening any (for `hearth-cli` listings).
  static Result<std::vector<DeviceDescription>> list_devices(const VulkanConfig& config);

  ~VulkanContext();
  VulkanContext(const VulkanContext&) = delete;
  VulkanContext& operator=(const VulkanContext&) = delete;

  VkInstance instance() const { return instance_->handle(); }
  VkPhysicalDevice physical_device() const { return physical_; }
  VkDevice device() const { return device_; }
  VkQueue queue() const { return queue_; }
  uint32_t queue_family() const { return queue_family_; }
  const DeviceDescription& description() const { return description_; }
  const DeviceChoice& choice() const { return choice_; }
  const DeviceLimits& limits() const { return limits_; }
  const VkPhysicalDeviceMemoryProperties& memory_properties() const { return memory_properties_; }
  const VulkanConfig& config() const { return config_; }
  const Logger& logger() const { return logger_; }
  // The device's pipelineCacheUUID, vendor and device ids (pipeline cache validation).
  const VkPhysicalDeviceProperties& properties() const { return properties_; }

  // `own_usage` is what this process's allocator holds, used when the
  // budget extension is missing.
  MemoryBudget memory_budget(uint64_t own_usage) const;

 private:
  VulkanContext() = default;

  VulkanConfig config_;
  Logger logger_;
  std::shared_ptr<VulkanInstance> instance_;  // config.instance, or one of its own
  VkPhysicalDevice physical_ = VK_NULL_HANDLE;
  VkDevice device_ = VK_NULL_HANDLE;
  VkQueue queue_ = VK_NULL_HANDLE;
  uint32_t queue_family_ = 0;
  DeviceDescription description_;
  DeviceChoice choice_;
  DeviceLimits limits_;
  VkPhysicalDeviceProperties properties_{};
  VkPhysicalDeviceMemoryProperties memory_properties_{};
};

// "vkCreateDevice failed: VK_ERROR_OUT_OF_DEVICE_MEMORY"
Error vk_error(VkResult result, const char* what);
const char* to_string(VkResult result);

}  // namespace hearth::vulkan
