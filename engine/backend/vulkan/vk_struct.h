// Zero-initialised Vulkan structs with sType set, without tripping
// -Wmissing-field-initializers on partially braced initialisers.
#pragma once

#include <vulkan/vulkan.h>

namespace hearth::vulkan {

template <typename T>
T vk_struct(VkStructureType type) {
  T value{};
  value.sType = type;
  return value;
}

}  // namespace hearth::vulkan
