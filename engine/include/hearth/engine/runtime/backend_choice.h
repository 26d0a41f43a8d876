// Chooses the compute backend for a model load: Vulkan on a usable GPU, or
// the CPU with the reason stated. The app and hearth-cli both come here, so
// the choice and its wording are the same everywhere and never silent.
#pragma once

#include <hearth/engine/backend/backend.h>
#include <hearth/engine/backend/vulkan/config.h>
#include <hearth/core/log.h>
#include <hearth/core/result.h>
#include <hearth/engine/kv/memory_estimate.h>
#include <hearth/engine/kv/offload_split.h>
#include <hearth/engine/model/weight_memory.h>
#include <hearth/engine/quant/kernels.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace hearth::runtime {

enum class BackendPreference {
  Auto,    // a hardware Vulkan device when there is one, else the CPU
  Cpu,     // the CPU only
  Vulkan,  // Vulkan, also on a software device (the user asked by name)
};

// OpTimes: the backend times every graph node (Backend::op_timings; hearth-cli
// bench --profile), Vulkan with timestamp queries, the CPU with a clock read
// around each node; it costs a little, so it is off otherwise.
enum class BackendProfiling { Off, OpTimes };

// How many model layers run on the GPU (partial offload: the first N on the
// GPU, the rest on the CPU, see backend/split_backend.h).
enum class GpuLayersMode {
  All,    // every layer (the whole model on the GPU)
  Auto,   // as many as the device's free VRAM holds (kv::split_layers)
  Count,  // the first `count` layers (capped at the model's layer count)
};

struct GpuLayers {
  GpuLayersMode mode = GpuLayersMode::All;
  int64_t count = 0;  // GpuLayersMode::Count only
};

// Parses "auto", "all" or a layer count >= 0; errors name the text.
Result<GpuLayers> parse_gpu_layers(const std::string& text);

// What a partial offload needs to know about the model about to be loaded:
// its layer count and the engine's memory estimate for the chosen context
// (weights = the file size, as the model picker counts them).
struct ModelFootprint {
  int64_t n_layer = 0;
  kv::MemoryEstimate estimate;
};

struct BackendRequest {
  BackendPreference preference = BackendPreference::Auto;
  std::string gpu_device;  // part of a device name; empty = the best device
  int cpu_threads = 2;
  quant::KernelLevel cpu_max_level = quant::KernelLevel::Avx512;  // cap on the CPU kernels
  BackendProfiling profiling = BackendProfiling::Off;
  vulkan::MatvecPath gpu_matvec_path = vulkan::MatvecPath::Auto;  // forced per device in tests and bench
  GpuLayers gpu_layers;    // with a Vulkan device and a known model
  // Without it the whole model goes to the GPU (gpu_layers is not applied).
  std::optional<ModelFootprint> model;
  // The Vulkan instance to open the device on. An owner that loads model
  // after model (the app's chat engine) passes the one it keeps from
  // keep_vulkan_instance (vulkan/instance.h says why); unset = one of the
  // request's own.
  std::shared_ptr<vulkan::VulkanInstance> vulkan_instance;
};

// A Vulkan instance for an owner to keep across loads, or null when no
// Vulkan driver is there (each request then states why, as without one).
std::shared_ptr<vulkan::VulkanInstance> keep_vulkan_instance(const Logger& logger = {});

// The layers to put on a GPU with `memory_free` free bytes: kv::split_layers
// for Auto (the function the picker's fit uses), the count capped at n_layer,
// or n_layer for All.
int64_t resolve_gpu_layers(const GpuLayers& layers, const ModelFootprint& model, uint64_t memory_free);

struct BackendChoice {
  std::unique_ptr<backend::Backend> backend;
  // One line for the user: "Vulkan: <device>", "Vulkan: <device>: 1 of 2
  // layers on GPU, rest on CPU" for a partial offload, or "CPU: <reason>" when
  // Vulkan was not used ("CPU: Vulkan: no device with 16-bit storage").
  std::string description;
  int64_t gpu_layers = 0;  // layers on the GPU; 0 on the CPU and when the request names no model
  // Whether the CPU computes any part of the model (and so reads its weights
  // while it runs): No when everything runs on the GPU.
  model::CpuComputes cpu_computes = model::CpuComputes::Yes;
};

// Never fails to return a backend: when Vulkan is unusable, the CPU backend
// comes back with the reason in `description` (and a warning in the log).
BackendChoice choose_backend(const BackendRequest& request, const Logger& logger = {});

// The GPU that choose_backend would use and its memory, without loading a
// model (for the model picker's free VRAM); nullopt when no Vulkan device is
// usable for the request (CPU preference included).
struct GpuProbe {
  backend::DeviceInfo device;
  std::string description;  // "Vulkan: <device>"
};
std::optional<GpuProbe> probe_gpu(const BackendRequest& request, const Logger& logger = {});

}  // namespace hearth::runtime
