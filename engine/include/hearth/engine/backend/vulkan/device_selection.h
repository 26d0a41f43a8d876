// Choosing the GPU: a pure function over device descriptions so that the
// policy (and every rejection message) is unit-tested with fake device lists.
#pragma once

#include <hearth/core/result.h>
#include <hearth/engine/backend/vulkan/config.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace hearth::vulkan {

enum class DeviceKind { Discrete, Integrated, Virtual, Software, Other };
const char* to_string(DeviceKind kind);

// What the selection needs to know about one physical device.
struct DeviceDescription {
  uint32_t index = 0;  // position in the driver's enumeration order
  std::string name;
  DeviceKind kind = DeviceKind::Other;
  uint32_t api_version = 0;          // VK_MAKE_API_VERSION encoding
  uint64_t device_local_bytes = 0;   // largest device-local heap
  bool has_compute_queue = false;
  bool storage_16bit = false;        // storageBuffer16BitAccess
  bool storage_8bit = false;         // storageBuffer8BitAccess (optional)
  bool shader_float16 = false;       // 16-bit arithmetic (optional)
  bool memory_budget = false;        // VK_EXT_memory_budget
  bool unified_memory = false;       // a device-local type is also host-visible
  uint32_t subgroup_size = 0;
  bool subgroup_arithmetic = false;  // subgroupAdd etc. in compute shaders
  // Packed 4x8-bit integer dot products in shaders (Vulkan 1.3 or
  // VK_KHR_shader_integer_dot_product), and whether the device says its
  // signed packed form is faster than the same arithmetic done by hand.
  bool integer_dot = false;
  bool integer_dot_accelerated = false;
  bool integer_dot_needs_extension = false;  // a Vulkan 1.2 device: enable the KHR extension
};

enum class RejectReason { NotPicked, ApiTooOld, NoComputeQueue, No16BitStorage, TooLittleMemory, SoftwareDevice };

struct RejectedDevice {
  uint32_t index = 0;
  std::string name;
  RejectReason reason = RejectReason::NotPicked;
  std::string detail;  // "llvmpipe: no 16-bit storage buffer access"
};

struct DeviceChoice {
  std::optional<uint32_t> chosen;  // index of the chosen device
  std::vector<RejectedDevice> rejected;
  // Set when nothing was chosen: one line for the app and CLI, e.g.
  // "Vulkan: no device with 16-bit storage; running on CPU".
  std::string fallback_reason;
};

// Ranks usable devices: the user's pick if usable, otherwise discrete before
// integrated before virtual before software, then by device-local memory.
// A picked device that is unusable is not silently replaced by another GPU:
// the result falls back to the CPU with the reason.
DeviceChoice select_device(std::span<const DeviceDescription> devices,
                           const DeviceRequirements& requirements,
                           const DevicePreference& preference);

std::string format_api_version(uint32_t version);

// The matvec path a device runs: Auto takes IntegerDot only where the
// device says its packed dot product is accelerated (emulated, it is slower
// than floats); a forced IntegerDot on a device without the feature is an
// error naming the device.
Result<MatvecPath> resolve_matvec_path(MatvecPath requested, const DeviceDescription& d);

}  // namespace hearth::vulkan
