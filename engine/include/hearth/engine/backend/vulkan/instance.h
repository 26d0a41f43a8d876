// The Vulkan instance: the loader and its drivers, opened once and shared by
// every context (device) made from it.
//
// A process that loads several models one after another should keep one
// instance for its lifetime and open each model's device on it, rather than
// let every context make and destroy its own: NVIDIA's driver (580.159,
// H200) refuses vkCreateInstance with VK_ERROR_INCOMPATIBLE_DRIVER after 29
// create/destroy cycles in one process, and other programs report driver
// state corrupted after fewer. The owner (the app's chat engine, a test
// process) holds the shared_ptr; nothing here is global.
#pragma once

#include <hearth/engine/backend/vulkan/config.h>
#include <hearth/core/log.h>
#include <hearth/core/result.h>
#include <vulkan/vulkan.h>

#include <memory>

namespace hearth::vulkan {

class VulkanInstance {
 public:
  // Fails with the user's fallback line ("Vulkan: no Vulkan driver (...);
  // running on CPU") when the loader or every driver refuses.
  static Result<std::shared_ptr<VulkanInstance>> create(ValidationLayers validation, const Logger& logger = {});

  ~VulkanInstance();
  VulkanInstance(const VulkanInstance&) = delete;
  VulkanInstance& operator=(const VulkanInstance&) = delete;

  VkInstance handle() const { return instance_; }

 private:
  explicit VulkanInstance(VkInstance instance) : instance_(instance) {}
  VkInstance instance_;
};

}  // namespace hearth::vulkan
