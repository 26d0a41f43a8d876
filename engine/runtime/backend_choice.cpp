#include "hearth/engine/runtime/backend_choice.h"

#include <fmt/format.h>
#include <hearth/engine/backend/cpu_backend.h>
#include <hearth/engine/backend/vulkan/vulkan_backend.h>

#include <algorithm>
#include <thread>

namespace hearth::runtime {

BackendChoice choose_backend(const BackendRequest& request, const Logger& logger) {
  BackendChoice choice;
  std::string vulkan_problem;
  if (request.preference != BackendPreference::Cpu) {
    vulkan::VulkanConfig config;
    config.preference.name = request.gpu_device;
    config.profiling = request.profiling == BackendProfiling::GpuTimestamps ? vulkan::ProfilingMode::Timestamps
                                                                              : vulkan::ProfilingMode::Off;
    // Software devices (lavapipe) are slower than the CPU backend: only used
    // when the user asks for Vulkan by name.
    config.requirements.software = request.preference == BackendPreference::Vulkan
                                       ? vulkan::SoftwareDevices::Allow
                                       : vulkan::SoftwareDevices::Reject;
    auto gpu = vulkan::VulkanBackend::create(config, logger);
    if (gpu.ok()) {
      choice.description = fmt::format("Vulkan: {}", gpu.value()->device().name);
      choice.backend = std::move(gpu).value();
      return choice;
    }
    vulkan_problem = gpu.error().message;
    logger.warn("{}", vulkan_problem);
  }
  choice.backend = backend::make_cpu_backend({request.cpu_threads});
  if (request.preference == BackendPreference::Cpu) {
    const unsigned threads = request.cpu_threads > 0 ? static_cast<unsigned>(request.cpu_threads)
                                                     : std::max(1u, std::thread::hardware_concurrency());
    choice.description = fmt::format("CPU: {} threads", threads);
  } else {
    choice.description = fmt::format("CPU: {}", vulkan_problem);
  }
  return choice;
}

}  // namespace hearth::runtime
