// Chooses the compute backend for a model load: Vulkan on a usable GPU, or
// the CPU with the reason stated. The app and hearth-cli both come here, so
// the choice and its wording are the same everywhere and never silent.
#pragma once

#include <hearth/engine/backend/backend.h>
#include <hearth/engine/core/log.h>
#include <hearth/engine/core/result.h>

#include <memory>
#include <string>

namespace hearth::runtime {

enum class BackendPreference {
  Auto,    // a hardware Vulkan device when there is one, else the CPU
  Cpu,     // the CPU only
  Vulkan,  // Vulkan, also on a software device (the user asked by name)
};

// GpuTimestamps: the Vulkan backend times every graph node with timestamp
// queries (hearth-cli bench --profile); it costs a little, so it is off otherwise.
enum class BackendProfiling { Off, GpuTimestamps };

struct BackendRequest {
  BackendPreference preference = BackendPreference::Auto;
  std::string gpu_device;  // part of a device name; empty = the best device
  int cpu_threads = 2;
  BackendProfiling profiling = BackendProfiling::Off;
};

struct BackendChoice {
  std::unique_ptr<backend::Backend> backend;
  // One line for the user: "Vulkan: <device>", or "CPU: <reason>" when
  // Vulkan was not used ("CPU: Vulkan: no device with 16-bit storage").
  std::string description;
};

// Never fails to return a backend: when Vulkan is unusable, the CPU backend
// comes back with the reason in `description` (and a warning in the log).
BackendChoice choose_backend(const BackendRequest& request, const Logger& logger = {});

}  // namespace hearth::runtime
