// Partial offload as a placement over two backends: the first N model layers
// run on the `front` backend (the GPU), the rest on the `back` backend (the
// CPU). Model code does not change: the split backend partitions each graph by
// Node::layer into consecutive segments and runs each on its backend, passing
// the activation that crosses a boundary as a host-side input of the next
// segment.
//
// Nodes outside layers (layer -1) follow this rule:
//   - the ones after the last layer (output norm and head) run with the last
//     layer, so the GPU result is handed back once per step;
//   - the ones before the first layer (token embedding lookup) run on the
//     backend of the graph's last layer: on the CPU in a real split, so the
//     embedding table is never uploaded (its rows reach the GPU as an input
//     copied with the step's one submission), on the GPU when every layer is.
// Each layer's KV cache is allocated on the backend that runs the layer
// (backend_for_layer, used by kv::KvCache::create).
#pragma once

#include <hearth/engine/backend/backend.h>

#include <cstdint>
#include <memory>
#include <string>

namespace hearth::backend {

struct SplitPlacement {
  int64_t front_layers = 0;  // layers [0, front_layers) run on the front backend
};

class SplitBackend final : public Backend {
 public:
  SplitBackend(std::unique_ptr<Backend> front, std::unique_ptr<Backend> back, SplitPlacement placement);

  // "<front>+<back>", e.g. "vulkan+cpu".
  const char* name() const override { return name_.c_str(); }
  // The front device (the GPU whose memory the placement is about).
  DeviceInfo device() const override { return front_->device(); }
  // Whether both backends can run the pair (nodes may land on either).
  bool supports(Op op, DType type) const override;
  // Buffers not tied to a layer go to the back backend (host memory).
  Result<std::unique_ptr<Buffer>> allocate(size_t bytes, BufferUsage usage) override;
  Status compute(Graph& graph) override;
  Backend& backend_for_layer(int64_t layer) override;
  // A pass over several sequences splits like any other: each segment's
  // attention reads the per-token block tables of the layers it runs, whose
  // pool lives on that segment's backend. So it batches when both sides do.
  bool supports_sequence_batches() const override;
  // The reservation (sized for the whole model, kv::scratch_sizes) goes to
  // both backends: the back one runs the embedding lookup, its layers and the
  // output head; the front one (when it runs any layer) runs whole layers,
  // whose activations the same estimate bounds, and keeps only what is its
  // device's (the Vulkan backend reserves the activation arena, not the CPU
  // conversion buffers). The back's reservation is also made when every
  // layer is on the front (the split does not know the layer count); the
  // runtime gives such a placement the plain front backend instead.
  Status reserve_scratch(const ScratchReservation& reservation) override;
  // Both backends' memory, added up (growths and high-water marks too, so a
  // growth on either side shows).
  MemoryUse memory_use() const override;
  // On the back backend (the host's: the CPU's threads).
  void run_host_tasks(int64_t n, const std::function<void(int64_t)>& task) override { back_->run_host_tasks(n, task); }

  Backend& front() { return *front_; }
  Backend& back() { return *back_; }
  const SplitPlacement& placement() const { return placement_; }
  // Segments run by the last compute (1 when the graph stayed on one side).
  int last_segments() const { return last_segments_; }

 private:
  std::unique_ptr<Backend> front_;
  std::unique_ptr<Backend> back_;
  SplitPlacement placement_;
  std::string name_;
  int last_segments_ = 0;
};

}  // namespace hearth::backend
