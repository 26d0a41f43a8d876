// Free VRAM of the GPU a model load would use, asked of the device without
// loading a model, so the model picker's fit verdicts (GPU / partial offload /
// CPU) use the real free memory (the memory-budget extension where present).
#pragma once

#include <hearth/core/log.h>

#include <hearth/settings/settings.h>

#include <cstdint>
#include <optional>
#include <string>

namespace hearth::app {

struct GpuMemory {
  std::string description;  // "Vulkan: <device>"
  uint64_t free_bytes = 0;
  uint64_t total_bytes = 0;
};

// nullopt when the load settings keep the model on the CPU (gpu_layers 0), no
// hardware Vulkan device is usable, or the engine is not part of the build.
// The engine logs what it finds (devices it does not use, and why) to `logger`.
std::optional<GpuMemory> probe_gpu_memory(const settings::LoadSettings& load, const Logger& logger = {});

}  // namespace hearth::app
