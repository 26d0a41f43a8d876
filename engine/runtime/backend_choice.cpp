#include "hearth/engine/runtime/backend_choice.h"

#include <fmt/format.h>
#include <hearth/engine/backend/cpu_backend.h>
#include <hearth/engine/backend/split_backend.h>
#include <hearth/engine/backend/vulkan/context.h>
#include <hearth/engine/backend/vulkan/instance.h>
#include <hearth/engine/backend/vulkan/vulkan_backend.h>

#include <algorithm>
#include <charconv>
#include <thread>

namespace hearth::runtime {
namespace {

vulkan::VulkanConfig vulkan_config(const BackendRequest& request) {
  vulkan::VulkanConfig config;
  config.instance = request.vulkan_instance;
  config.preference.name = request.gpu_device;
  config.matvec_path = request.gpu_matvec_path;
  config.profiling = request.profiling == BackendProfiling::OpTimes ? vulkan::ProfilingMode::Timestamps
                                                                            : vulkan::ProfilingMode::Off;
  // Software devices (lavapipe) are slower than the CPU backend: only used
  // when the user asks for Vulkan by name.
  config.requirements.software = request.preference == BackendPreference::Vulkan ? vulkan::SoftwareDevices::Allow
                                                                                   : vulkan::SoftwareDevices::Reject;
  return config;
}

std::unique_ptr<backend::Backend> make_cpu(const BackendRequest& request) {
  backend::CpuBackendOptions options;
  options.threads = request.cpu_threads;
  options.max_level = request.cpu_max_level;
  options.time_ops = request.profiling == BackendProfiling::OpTimes;
  return backend::make_cpu_backend(options);
}

unsigned cpu_threads(const BackendRequest& request) {
  return request.cpu_threads > 0 ? static_cast<unsigned>(request.cpu_threads)
                                 : std::max(1u, std::thread::hardware_concurrency());
}

}  // namespace

std::shared_ptr<vulkan::VulkanInstance> keep_vulkan_instance(const Logger& logger) {
  auto instance = vulkan::VulkanInstance::create(vulkan::ValidationLayers::Off, logger);
  return instance.ok() ? std::move(instance).value() : nullptr;
}

Result<GpuLayers> parse_gpu_layers(const std::string& text) {
  if (text == "all") return GpuLayers{GpuLayersMode::All, 0};
  if (text == "auto") return GpuLayers{GpuLayersMode::Auto, 0};
  int64_t count = -1;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), count);
  if (ec != std::errc() || end != text.data() + text.size() || count < 0) {
    return make_error(ErrorCode::InvalidArgument,
                      fmt::format("GPU layers '{}' is not 'auto', 'all' or a layer count >= 0", text));
  }
  return GpuLayers{GpuLayersMode::Count, count};
}

int64_t resolve_gpu_layers(const GpuLayers& layers, const ModelFootprint& model, uint64_t memory_free) {
  switch (layers.mode) {
    case GpuLayersMode::All: return model.n_layer;
    case GpuLayersMode::Count: return std::clamp<int64_t>(layers.count, 0, model.n_layer);
    case GpuLayersMode::Auto:
      return kv::split_layers(model.estimate, model.n_layer, kv::gpu_budget(memory_free)).gpu_layers;
  }
  return model.n_layer;
}

BackendChoice choose_backend(const BackendRequest& request, const Logger& logger) {
  BackendChoice choice;
  std::string vulkan_problem;
  if (request.preference != BackendPreference::Cpu) {
    auto gpu = vulkan::VulkanBackend::create(vulkan_config(request), logger);
    if (gpu.ok()) {
      const backend::DeviceInfo device = gpu.value()->device();
      if (!request.model) {
        choice.description = fmt::format("Vulkan: {}", device.name);
        choice.backend = std::move(gpu).value();
        choice.cpu_computes = model::CpuComputes::No;
        return choice;
      }
      const int64_t n_layer = request.model->n_layer;
      const int64_t layers = resolve_gpu_layers(request.gpu_layers, *request.model, device.memory_free);
      choice.gpu_layers = layers;
      if (layers >= n_layer) {
        choice.description = fmt::format("Vulkan: {}", device.name);
        choice.backend = std::move(gpu).value();
        choice.cpu_computes = model::CpuComputes::No;
        return choice;
      }
      if (layers > 0) {
        choice.description =
            fmt::format("Vulkan: {}: {} of {} layers on GPU, rest on CPU", device.name, layers, n_layer);
        choice.backend = std::make_unique<backend::SplitBackend>(
            std::move(gpu).value(), make_cpu(request), backend::SplitPlacement{layers});
        return choice;
      }
      vulkan_problem = request.gpu_layers.mode == GpuLayersMode::Auto
                           ? fmt::format("Vulkan: {} has {} MiB free, not enough for one layer", device.name,
                                         device.memory_free >> 20)
                           : fmt::format("0 of {} layers on the GPU", n_layer);
    } else {
      vulkan_problem = gpu.error().message;
      logger.warn("{}", vulkan_problem);
    }
  }
  choice.backend = make_cpu(request);
  if (request.preference == BackendPreference::Cpu) {
    choice.description = fmt::format("CPU: {} threads", cpu_threads(request));
  } else {
    choice.description = fmt::format("CPU: {}", vulkan_problem);
  }
  return choice;
}

std::optional<GpuProbe> probe_gpu(const BackendRequest& request, const Logger& logger) {
  if (request.preference == BackendPreference::Cpu) return std::nullopt;
  // The context alone (instance, device, queue): no pipelines, no buffers.
  auto ctx = vulkan::VulkanContext::create(vulkan_config(request), logger);
  if (!ctx.ok()) return std::nullopt;
  const auto& d = (*ctx)->description();
  const vulkan::MemoryBudget budget = (*ctx)->memory_budget(0);
  GpuProbe probe;
  probe.device.name = d.name;
  probe.device.kind = d.kind == vulkan::DeviceKind::Discrete     ? backend::DeviceKind::DiscreteGpu
                      : d.kind == vulkan::DeviceKind::Integrated ? backend::DeviceKind::IntegratedGpu
                                                                 : backend::DeviceKind::Other;
  probe.device.memory_total = budget.device_local_total;
  probe.device.memory_free = budget.free_bytes();
  probe.description = fmt::format("Vulkan: {}", d.name);
  return probe;
}

}  // namespace hearth::runtime
