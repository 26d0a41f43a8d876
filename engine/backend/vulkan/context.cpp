#include "hearth/engine/backend/vulkan/context.h"

#include "hearth/engine/backend/vulkan/instance.h"

#include "vk_struct.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

namespace hearth::vulkan {
namespace {

DeviceKind kind_of(VkPhysicalDeviceType type) {
  switch (type) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return DeviceKind::Discrete;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return DeviceKind::Integrated;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return DeviceKind::Virtual;
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return DeviceKind::Software;
    default: return DeviceKind::Other;
  }
}

bool has_extension(VkPhysicalDevice pd, const char* name) {
  uint32_t count = 0;
  vkEnumerateDeviceExtensionProperties(pd, nullptr, &count, nullptr);
  std::vector<VkExtensionProperties> exts(count);
  vkEnumerateDeviceExtensionProperties(pd, nullptr, &count, exts.data());
  return std::any_of(exts.begin(), exts.end(),
                     [&](const VkExtensionProperties& e) { return std::strcmp(e.extensionName, name) == 0; });
}

std::optional<uint32_t> compute_queue_family(VkPhysicalDevice pd) {
  uint32_t count = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(pd, &count, nullptr);
  std::vector<VkQueueFamilyProperties> families(count);
  vkGetPhysicalDeviceQueueFamilyProperties(pd, &count, families.data());
  // Prefer a family with compute; graphics+compute is fine (one queue per token).
  for (uint32_t i = 0; i < count; ++i) {
    if (families[i].queueFlags & VK_QUEUE_COMPUTE_BIT) return i;
  }
  return std::nullopt;
}

DeviceDescription describe(VkPhysicalDevice pd, uint32_t index) {
  auto subgroup = vk_struct<VkPhysicalDeviceSubgroupProperties>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES);
  auto props = vk_struct<VkPhysicalDeviceProperties2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2);
  props.pNext = &subgroup;
  vkGetPhysicalDeviceProperties(pd, &props.properties);
  // The integer-dot structures may only be chained where the device knows them.
  const bool dot_core = props.properties.apiVersion >= VK_API_VERSION_1_3;
  const bool dot_ext = has_extension(pd, VK_KHR_SHADER_INTEGER_DOT_PRODUCT_EXTENSION_NAME);
  auto dot_props = vk_struct<VkPhysicalDeviceShaderIntegerDotProductProperties>(
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_PROPERTIES);
  if (dot_core || dot_ext) subgroup.pNext = &dot_props;
  vkGetPhysicalDeviceProperties2(pd, &props);

  auto f11 = vk_struct<VkPhysicalDeviceVulkan11Features>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES);
  auto f12 = vk_struct<VkPhysicalDeviceVulkan12Features>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES);
  f11.pNext = &f12;
  auto dot_features = vk_struct<VkPhysicalDeviceShaderIntegerDotProductFeatures>(
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_FEATURES);
  if (dot_core || dot_ext) f12.pNext = &dot_features;
  auto features = vk_struct<VkPhysicalDeviceFeatures2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2);
  features.pNext = &f11;
  const bool v12 = props.properties.apiVersion >= VK_API_VERSION_1_2;
  if (v12) vkGetPhysicalDeviceFeatures2(pd, &features);

  VkPhysicalDeviceMemoryProperties mem;
  vkGetPhysicalDeviceMemoryProperties(pd, &mem);

  DeviceDescription d;
  d.index = index;
  d.name = props.properties.deviceName;
  d.kind = kind_of(props.properties.deviceType);
  d.api_version = props.properties.apiVersion;
  for (uint32_t h = 0; h < mem.memoryHeapCount; ++h) {
    if (mem.memoryHeaps[h].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) {
      d.device_local_bytes = std::max<uint64_t>(d.device_local_bytes, mem.memoryHeaps[h].size);
    }
  }
  for (uint32_t t = 0; t < mem.memoryTypeCount; ++t) {
    const auto flags = mem.memoryTypes[t].propertyFlags;
    if ((flags & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT) && (flags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT)) {
      // Only a true UMA device exposes all of its memory this way; a small
      // host-visible window (ReBAR off) is not worth placing weights in.
      const uint64_t heap = mem.memoryHeaps[mem.memoryTypes[t].heapIndex].size;
      if (heap == d.device_local_bytes) d.unified_memory = true;
    }
  }
  d.has_compute_queue = compute_queue_family(pd).has_value();
  d.storage_16bit = v12 && f11.storageBuffer16BitAccess;
  d.storage_8bit = v12 && f12.storageBuffer8BitAccess;
  d.shader_float16 = v12 && f12.shaderFloat16;
  d.memory_budget = has_extension(pd, VK_EXT_MEMORY_BUDGET_EXTENSION_NAME);
  d.subgroup_size = subgroup.subgroupSize;
  d.subgroup_arithmetic = (subgroup.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) &&
                          (subgroup.supportedOperations & VK_SUBGROUP_FEATURE_ARITHMETIC_BIT) &&
                          (subgroup.supportedOperations & VK_SUBGROUP_FEATURE_BASIC_BIT);
  d.integer_dot = v12 && (dot_core || dot_ext) && dot_features.shaderIntegerDotProduct;
  d.integer_dot_accelerated = d.integer_dot && dot_props.integerDotProduct4x8BitPackedSignedAccelerated;
  d.integer_dot_needs_extension = d.integer_dot && !dot_core;
  return d;
}

Result<std::vector<VkPhysicalDevice>> physical_devices(VkInstance instance) {
  uint32_t count = 0;
  VkResult r = vkEnumeratePhysicalDevices(instance, &count, nullptr);
  if (r != VK_SUCCESS) return vk_error(r, "vkEnumeratePhysicalDevices");
  std::vector<VkPhysicalDevice> out(count);
  r = vkEnumeratePhysicalDevices(instance, &count, out.data());
  if (r != VK_SUCCESS && r != VK_INCOMPLETE) return vk_error(r, "vkEnumeratePhysicalDevices");
  out.resize(count);
  return out;
}

}  // namespace

const char* to_string(VkResult result) {
  switch (result) {
    case VK_SUCCESS: return "VK_SUCCESS";
    case VK_NOT_READY: return "VK_NOT_READY";
    case VK_TIMEOUT: return "VK_TIMEOUT";
    case VK_INCOMPLETE: return "VK_INCOMPLETE";
    case VK_ERROR_OUT_OF_HOST_MEMORY: return "VK_ERROR_OUT_OF_HOST_MEMORY";
    case VK_ERROR_OUT_OF_DEVICE_MEMORY: return "VK_ERROR_OUT_OF_DEVICE_MEMORY";
    case VK_ERROR_INITIALIZATION_FAILED: return "VK_ERROR_INITIALIZATION_FAILED";
    case VK_ERROR_DEVICE_LOST: return "VK_ERROR_DEVICE_LOST";
    case VK_ERROR_MEMORY_MAP_FAILED: return "VK_ERROR_MEMORY_MAP_FAILED";
    case VK_ERROR_LAYER_NOT_PRESENT: return "VK_ERROR_LAYER_NOT_PRESENT";
    case VK_ERROR_EXTENSION_NOT_PRESENT: return "VK_ERROR_EXTENSION_NOT_PRESENT";
    case VK_ERROR_FEATURE_NOT_PRESENT: return "VK_ERROR_FEATURE_NOT_PRESENT";
    case VK_ERROR_INCOMPATIBLE_DRIVER: return "VK_ERROR_INCOMPATIBLE_DRIVER";
    case VK_ERROR_TOO_MANY_OBJECTS: return "VK_ERROR_TOO_MANY_OBJECTS";
    case VK_ERROR_OUT_OF_POOL_MEMORY: return "VK_ERROR_OUT_OF_POOL_MEMORY";
    default: return "VK_ERROR_UNKNOWN";
  }
}

Error vk_error(VkResult result, const char* what) {
  const ErrorCode code = (result == VK_ERROR_OUT_OF_DEVICE_MEMORY || result == VK_ERROR_OUT_OF_HOST_MEMORY)
                             ? ErrorCode::OutOfMemory
                             : ErrorCode::Internal;
  return make_error(code, fmt::format("{} failed: {}", what, to_string(result)));
}

namespace {
Result<std::shared_ptr<VulkanInstance>> instance_for(const VulkanConfig& config, const Logger& logger) {
  if (config.instance) return config.instance;
  return VulkanInstance::create(config.validation, logger);
}
}  // namespace

Result<std::vector<DeviceDescription>> VulkanContext::list_devices(const VulkanConfig& config) {
  HEARTH_TRY(const auto instance, instance_for(config, Logger{}));
  HEARTH_TRY(auto pds, physical_devices(instance->handle()));
  std::vector<DeviceDescription> out;
  for (uint32_t i = 0; i < pds.size(); ++i) out.push_back(describe(pds[i], i));
  return out;
}

Result<std::unique_ptr<VulkanContext>> VulkanContext::create(const VulkanConfig& config, Logger logger) {
  HEARTH_TRY(auto instance, instance_for(config, logger));
  HEARTH_TRY(auto pds, physical_devices(instance->handle()));
  std::vector<DeviceDescription> descriptions;
  for (uint32_t i = 0; i < pds.size(); ++i) descriptions.push_back(describe(pds[i], i));

  DeviceChoice choice = select_device(descriptions, config.requirements, config.preference);
  for (const auto& r : choice.rejected) logger.info("Vulkan: not using {}", r.detail);
  if (!choice.chosen) return make_error(ErrorCode::Unsupported, choice.fallback_reason);

  std::unique_ptr<VulkanContext> ctx(new VulkanContext());
  ctx->config_ = config;
  ctx->logger_ = logger;
  ctx->choice_ = choice;
  ctx->physical_ = pds[*choice.chosen];
  ctx->description_ = descriptions[*choice.chosen];
  ctx->queue_family_ = *compute_queue_family(ctx->physical_);
  const auto& desc = ctx->description_;

  vkGetPhysicalDeviceProperties(ctx->physical_, &ctx->properties_);
  vkGetPhysicalDeviceMemoryProperties(ctx->physical_, &ctx->memory_properties_);
  const auto& lim = ctx->properties_.limits;
  auto m3 = vk_struct<VkPhysicalDeviceMaintenance3Properties>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES);
  auto props2 = vk_struct<VkPhysicalDeviceProperties2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2);
  props2.pNext = &m3;
  vkGetPhysicalDeviceProperties2(ctx->physical_, &props2);
  auto& l = ctx->limits_;
  l.max_allocation_size = m3.maxMemoryAllocationSize;
  l.max_storage_buffer_range = lim.maxStorageBufferRange;
  l.storage_offset_alignment = lim.minStorageBufferOffsetAlignment;
  l.non_coherent_atom_size = lim.nonCoherentAtomSize;
  l.max_workgroup_size = lim.maxComputeWorkGroupSize[0];
  l.max_workgroup_invocations = lim.maxComputeWorkGroupInvocations;
  for (int i = 0; i < 3; ++i) l.max_workgroup_count[i] = lim.maxComputeWorkGroupCount[i];
  l.max_shared_memory = lim.maxComputeSharedMemorySize;
  l.max_push_constants = lim.maxPushConstantsSize;

  uint32_t family_count = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(ctx->physical_, &family_count, nullptr);
  std::vector<VkQueueFamilyProperties> families(family_count);
  vkGetPhysicalDeviceQueueFamilyProperties(ctx->physical_, &family_count, families.data());
  if (families[ctx->queue_family_].timestampValidBits > 0) l.timestamp_period_ns = lim.timestampPeriod;

  const float priority = 1.0f;
  auto queue_info = vk_struct<VkDeviceQueueCreateInfo>(VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO);
  queue_info.queueFamilyIndex = ctx->queue_family_;
  queue_info.queueCount = 1;
  queue_info.pQueuePriorities = &priority;

  auto f11 = vk_struct<VkPhysicalDeviceVulkan11Features>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES);
  auto f12 = vk_struct<VkPhysicalDeviceVulkan12Features>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES);
  f11.pNext = &f12;
  f11.storageBuffer16BitAccess = VK_TRUE;
  f12.storageBuffer8BitAccess = desc.storage_8bit ? VK_TRUE : VK_FALSE;
  f12.shaderFloat16 = desc.shader_float16 ? VK_TRUE : VK_FALSE;
  auto dot_features = vk_struct<VkPhysicalDeviceShaderIntegerDotProductFeatures>(
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_FEATURES);
  dot_features.shaderIntegerDotProduct = VK_TRUE;
  if (desc.integer_dot) f12.pNext = &dot_features;
  auto features = vk_struct<VkPhysicalDeviceFeatures2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2);
  features.pNext = &f11;

  std::vector<const char*> extensions;
  if (desc.memory_budget) extensions.push_back(VK_EXT_MEMORY_BUDGET_EXTENSION_NAME);
  if (desc.integer_dot_needs_extension) extensions.push_back(VK_KHR_SHADER_INTEGER_DOT_PRODUCT_EXTENSION_NAME);

  auto device_info = vk_struct<VkDeviceCreateInfo>(VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO);
  device_info.pNext = &features;
  device_info.queueCreateInfoCount = 1;
  device_info.pQueueCreateInfos = &queue_info;
  device_info.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
  device_info.ppEnabledExtensionNames = extensions.data();
  const VkResult r = vkCreateDevice(ctx->physical_, &device_info, nullptr, &ctx->device_);
  if (r != VK_SUCCESS) {
    return make_error(ErrorCode::Unsupported,
                      fmt::format("Vulkan: could not open {} ({}); running on CPU", desc.name, to_string(r)));
  }
  ctx->instance_ = std::move(instance);
  vkGetDeviceQueue(ctx->device_, ctx->queue_family_, 0, &ctx->queue_);
  logger.info("Vulkan: using {} ({}, {} MiB, Vulkan {}, subgroup {}, integer dot {})", desc.name,
              to_string(desc.kind), desc.device_local_bytes >> 20, format_api_version(desc.api_version),
              desc.subgroup_size,
              desc.integer_dot_accelerated ? "accelerated" : desc.integer_dot ? "not accelerated" : "none");
  return ctx;
}

VulkanContext::~VulkanContext() {
  if (device_ != VK_NULL_HANDLE) {
    vkDeviceWaitIdle(device_);
    vkDestroyDevice(device_, nullptr);
  }
  // instance_ goes after the device, and only with the last context on it.
}

MemoryBudget VulkanContext::memory_budget(uint64_t own_usage) const {
  MemoryBudget out;
  uint32_t heap = 0;
  for (uint32_t h = 0; h < memory_properties_.memoryHeapCount; ++h) {
    if ((memory_properties_.memoryHeaps[h].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) &&
        memory_properties_.memoryHeaps[h].size > memory_properties_.memoryHeaps[heap].size) {
      heap = h;
    }
  }
  out.device_local_total = memory_properties_.memoryHeaps[heap].size;
  if (description_.memory_budget) {
    auto budget = vk_struct<VkPhysicalDeviceMemoryBudgetPropertiesEXT>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_BUDGET_PROPERTIES_EXT);
    auto props = vk_struct<VkPhysicalDeviceMemoryProperties2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_PROPERTIES_2);
    props.pNext = &budget;
    vkGetPhysicalDeviceMemoryProperties2(physical_, &props);
    out.source = MemoryBudget::Source::Extension;
    out.device_local_budget = budget.heapBudget[heap];
    out.device_local_usage = budget.heapUsage[heap];
  } else {
    out.source = MemoryBudget::Source::Estimate;
    out.device_local_budget = out.device_local_total;
    out.device_local_usage = own_usage;
  }
  return out;
}

}  // namespace hearth::vulkan
