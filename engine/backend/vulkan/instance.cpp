#include "hearth/engine/backend/vulkan/instance.h"

#include "hearth/engine/backend/vulkan/context.h"
#include "hearth/engine/backend/vulkan/device_selection.h"
#include "vk_struct.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <vector>

namespace hearth::vulkan {
namespace {

constexpr const char* kValidationLayer = "VK_LAYER_KHRONOS_validation";

bool has_layer(const char* name) {
  uint32_t count = 0;
  vkEnumerateInstanceLayerProperties(&count, nullptr);
  std::vector<VkLayerProperties> layers(count);
  vkEnumerateInstanceLayerProperties(&count, layers.data());
  return std::any_of(layers.begin(), layers.end(),
                     [&](const VkLayerProperties& l) { return std::strcmp(l.layerName, name) == 0; });
}

}  // namespace

Result<std::shared_ptr<VulkanInstance>> VulkanInstance::create(ValidationLayers validation, const Logger& logger) {
  uint32_t loader_version = VK_API_VERSION_1_0;
  if (vkEnumerateInstanceVersion(&loader_version) != VK_SUCCESS || loader_version < VK_API_VERSION_1_2) {
    return make_error(ErrorCode::Unsupported,
                      fmt::format("Vulkan: the Vulkan loader supports {}, needs 1.2; running on CPU",
                                  format_api_version(loader_version)));
  }
  auto app = vk_struct<VkApplicationInfo>(VK_STRUCTURE_TYPE_APPLICATION_INFO);
  app.pApplicationName = "Hearth";
  app.pEngineName = "Hearth";
  app.apiVersion = VK_API_VERSION_1_2;
  std::vector<const char*> layers;
  if (validation == ValidationLayers::On) {
    if (has_layer(kValidationLayer)) {
      layers.push_back(kValidationLayer);
    } else {
      logger.warn("Vulkan: validation requested but {} is not installed", kValidationLayer);
    }
  }
  auto info = vk_struct<VkInstanceCreateInfo>(VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO);
  info.pApplicationInfo = &app;
  info.enabledLayerCount = static_cast<uint32_t>(layers.size());
  info.ppEnabledLayerNames = layers.data();
  VkInstance instance = VK_NULL_HANDLE;
  const VkResult r = vkCreateInstance(&info, nullptr, &instance);
  if (r != VK_SUCCESS) {
    return make_error(ErrorCode::Unsupported,
                      fmt::format("Vulkan: no Vulkan driver ({}); running on CPU", to_string(r)));
  }
  return std::shared_ptr<VulkanInstance>(new VulkanInstance(instance));
}

VulkanInstance::~VulkanInstance() { vkDestroyInstance(instance_, nullptr); }

}  // namespace hearth::vulkan
