// Options of the Vulkan backend. They come from the engine configuration the
// app builds from its settings; nothing here is read from the environment.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace hearth::vulkan {

class VulkanInstance;  // instance.h

enum class ValidationLayers { Off, On };
// Software devices (lavapipe, SwiftShader) are slower than the CPU backend, so
// they are only chosen when allowed (tests) or picked by the user.
enum class SoftwareDevices { Reject, Allow };
enum class ProfilingMode { Off, Timestamps };

// How the products of quantized weights (the matrix-vector products of
// decode and passes of up to 8 tokens, and the prefill tiles) read their
// activations. Plain: f32 activations, weights decoded to floats.
// IntegerDot: activations quantized to 8-bit blocks once per product input,
// then packed 4x8-bit dot products on the weights' integer codes. Auto takes
// IntegerDot where the device says its packed dot product is accelerated.
// Forcing IntegerDot on a device without the feature fails backend creation.
enum class MatvecPath { Auto, Plain, IntegerDot };
const char* to_string(MatvecPath path);  // "auto", "plain", "int-dot"
std::optional<MatvecPath> parse_matvec_path(std::string_view text);  // to_string's names

struct DeviceRequirements {
  uint32_t min_api_version = (1u << 22) | (2u << 12);  // VK_MAKE_API_VERSION(0, 1, 2, 0)
  uint64_t min_device_memory_bytes = 256ull << 20;
  SoftwareDevices software = SoftwareDevices::Reject;
};

struct DevicePreference {
  // The device the user picked: an index in enumeration order, or a
  // case-insensitive substring of the device name. Neither set = automatic.
  std::optional<uint32_t> index;
  std::string name;
};

struct VulkanConfig {
  // The instance to open the device on, shared with the owner's other
  // contexts (instance.h says why a process keeps one); unset = the context
  // makes its own, with `validation`.
  std::shared_ptr<VulkanInstance> instance;
  ValidationLayers validation = ValidationLayers::Off;
  DeviceRequirements requirements;
  DevicePreference preference;
  ProfilingMode profiling = ProfilingMode::Off;
  MatvecPath matvec_path = MatvecPath::Auto;
  // Attention over long contexts split into slices of about this many
  // positions (KernelTuning::attention_split_positions; 0 = never split);
  // unset = the device's default. Tests force the split on any device.
  std::optional<uint32_t> attention_split_positions;
  // Pipeline cache file; empty = pipelines are compiled at every start.
  std::string pipeline_cache_path;
};

}  // namespace hearth::vulkan
