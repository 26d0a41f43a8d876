// The Vulkan implementation of backend::Backend: runs a Graph's nodes with the
// kernels of kernels.h. Weights are uploaded on first use and stay on the
// device; activations live in a device arena, reserved before the first token
// by reserve_scratch() and counted by memory_use(); the recorded command
// buffer is reused while the graph's shape stays the same (every decode step).
#pragma once

#include <hearth/engine/backend/backend.h>
#include <hearth/engine/backend/vulkan/config.h>
#include <hearth/core/log.h>

#include <memory>

namespace hearth::vulkan {

struct VulkanBackendStats {
  uint64_t weight_bytes = 0;    // uploaded weights held on the device
  uint64_t device_bytes = 0;    // everything the allocator holds
  uint64_t used_bytes = 0;      // of that, what buffers use (weights, KV, scratch)
  uint64_t activation_bytes = 0;  // the device-local activation arena (MemoryUse::scratch_bytes counts it)
  uint64_t staging_bytes = 0;   // host-visible per-step inputs and the read-back output (not in MemoryUse)
  uint64_t kernel_scratch_bytes = 0;  // 8-bit activations (int-dot) and split attention's partials (in MemoryUse::scratch_bytes)
  MatvecPath matvec_path = MatvecPath::Plain;  // the path this device runs (Auto resolved)
  uint32_t recordings = 0;      // command buffers recorded
  uint32_t reuses = 0;          // computes that resubmitted the previous recording
};

class VulkanBackend : public backend::Backend {
 public:
  // When no device is usable the error message is the user-facing fallback
  // line ("Vulkan: no device with 16-bit storage; running on CPU").
  static Result<std::unique_ptr<VulkanBackend>> create(const VulkanConfig& config, Logger logger = {});
  ~VulkanBackend() override;

  virtual VulkanBackendStats stats() const = 0;
  // Drops every uploaded weight (model unload); buffers allocated through
  // allocate() stay with their owners.
  virtual void release_weights() = 0;
  // op_timings(): GPU time in ms of each graph node of the last compute, in
  // node order, labelled with the node's op name (to_string(Op)); empty
  // unless VulkanConfig::profiling is Timestamps. The spans do not overlap,
  // so their sum is at most the compute's duration.

 protected:
  VulkanBackend() = default;
};

}  // namespace hearth::vulkan
