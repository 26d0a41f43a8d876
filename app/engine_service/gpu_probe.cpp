#include "engine_service/gpu_probe.h"

#ifdef HEARTH_HAVE_RUNTIME
#include <hearth/engine/runtime/backend_choice.h>
#endif

namespace hearth::app {

std::optional<GpuMemory> probe_gpu_memory(const settings::LoadSettings& load, const Logger& logger) {
#ifdef HEARTH_HAVE_RUNTIME
  runtime::BackendRequest request;
  // The same request a load makes (runtime_chat_engine.cpp): automatic device
  // choice, so software devices are not counted as a GPU.
  request.preference = load.gpu_layers == 0 ? runtime::BackendPreference::Cpu : runtime::BackendPreference::Auto;
  request.gpu_device = load.gpu_device;
  const auto probe = runtime::probe_gpu(request, logger);
  if (!probe) return std::nullopt;
  return GpuMemory{probe->description, probe->device.memory_free, probe->device.memory_total};
#else
  (void)load;
  (void)logger;
  return std::nullopt;
#endif
}

}  // namespace hearth::app
