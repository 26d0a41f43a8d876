// The interface every compute backend implements (CPU here, Vulkan beside it):
// a Device that says what the hardware is, Buffers of device memory, and a
// Backend that says which (op, type) pairs it supports and runs a Graph.
// Model code only builds graphs; where each node runs is a placement decision.
#pragma once

#include <hearth/engine/backend/graph.h>
#include <hearth/core/result.h>
#include <hearth/engine/quant/types.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace hearth::backend {

enum class DeviceKind { Cpu, IntegratedGpu, DiscreteGpu, Other };

struct DeviceInfo {
  std::string name;
  DeviceKind kind = DeviceKind::Cpu;
  uint64_t memory_total = 0;  // bytes the device can address for us
  uint64_t memory_free = 0;   // bytes free now (budget extension or MemAvailable)
};

enum class BufferUsage { Weights, KvCache, Scratch };

// Working memory a backend sets aside for running graphs, sized before the
// first graph by the engine's one sizing function (kv::scratch_sizes).
struct ScratchReservation {
  uint64_t activation_bytes = 0;  // the arena activations are planned into (activation_plan.h)
  uint64_t conversion_bytes = 0;  // the matrix products' buffer: converted activations (e.g. 8-bit blocks) and kernel tiles
  uint64_t expert_bytes = 0;      // products by expert id: one expert's gathered inputs and outputs (0 without experts)
};

// What a backend holds now, counted where it allocates, so tests can hold the
// memory estimate to what is really allocated. Weights used in place from the
// mapped model file are not the backend's and count zero here.
struct MemoryUse {
  uint64_t weights_bytes = 0;  // weight buffers (uploaded copies)
  uint64_t kv_bytes = 0;       // KV-cache buffers
  uint64_t scratch_bytes = 0;  // scratch buffers, activation arena and conversion buffer
  uint64_t scratch_high_water_bytes = 0;  // the most scratch_bytes has been
  uint64_t scratch_growths = 0;  // times a graph needed more than was reserved (0 when the estimate holds)
};

// Device memory. `host_data()` is null when the memory is not host-visible.
class Buffer {
 public:
  virtual ~Buffer() = default;
  virtual size_t size() const = 0;
  virtual BufferUsage usage() const = 0;
  virtual void* host_data() = 0;
  // Maps [offset, offset + bytes) now, keeping its contents, where memory is
  // faulted in on first touch (the host's): the first pass writing there then
  // takes no page faults. A no-op for memory the backend manages otherwise.
  virtual void fault_in(size_t offset, size_t bytes) {
    (void)offset;
    (void)bytes;
  }
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual const char* name() const = 0;  // "cpu", "vulkan"
  virtual DeviceInfo device() const = 0;
  // Whether this backend can run `op` with src0 of `type` (a weight format for
  // MatMul/GetRows, the KV type for KvStore/Attention, F32 otherwise).
  virtual bool supports(Op op, DType type) const = 0;
  virtual Result<std::unique_ptr<Buffer>> allocate(size_t bytes, BufferUsage usage) = 0;
  // Runs every node of `graph` in order; activations get memory from the
  // backend. Returns when graph.output holds its values on the host.
  virtual Status compute(Graph& graph) = 0;

  // Allocates the scratch memory up front (grows it if it is smaller), so the
  // memory in use is what the estimate said before the first token. A graph
  // that needs more still runs: the backend grows the memory and counts it in
  // MemoryUse::scratch_growths. Backends that manage memory otherwise ignore it.
  virtual Status reserve_scratch(const ScratchReservation& reservation) {
    (void)reservation;
    return {};
  }
  // Between graphs (not while compute runs on another thread).
  virtual MemoryUse memory_use() const { return {}; }
  // The backend that runs model layer `layer` and therefore holds its KV
  // cache: this one, unless this backend places layers on several devices
  // (partial offload, split_backend.h).
  virtual Backend& backend_for_layer(int64_t /*layer*/) { return *this; }
  // Whether KvStore/Attention take a KvView with per-sequence block tables
  // (KvView::token_seq: several sequences in one forward pass).
  virtual bool supports_sequence_batches() const { return false; }
  // The time in ms of each node of the last compute (or of each group of
  // nodes the backend ran as one), in order, labelled with the op
  // (op_profile.h sums them), where the backend was made to time them
  // (hearth-cli bench --profile): GPU time on Vulkan, wall time on the CPU.
  // Empty otherwise. Between graphs only.
  virtual std::vector<std::pair<std::string, double>> op_timings() const { return {}; }
  // Runs task(0) .. task(n - 1), each once, on the host, in any order and
  // possibly at the same time (the CPU backend uses its threads, idle
  // between graphs): work of independent items around a pass, such as each
  // sequence's draw from its logits. Between graphs only.
  virtual void run_host_tasks(int64_t n, const std::function<void(int64_t)>& task) {
    for (int64_t i = 0; i < n; ++i) task(i);
  }
};

// Checks the whole graph against a backend's supports() before running it, so
// an unsupported weight type is a clear error naming the tensor and the op.
Status check_supported(const Backend& backend, const Graph& graph);

}  // namespace hearth::backend
