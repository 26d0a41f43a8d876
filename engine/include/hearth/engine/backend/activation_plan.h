// Where each activation of a graph lives inside one arena. A tensor occupies
// its range from the node that writes it through its last reader (the
// graph's output to the end). Placement is planned for the whole graph before
// it runs, largest tensors first, each at the lowest offset free for its whole
// lifetime (the "greedy by size" offline strategy): on the transformer graphs
// Hearth builds this reaches the least memory any placement can, the most
// bytes alive at one node, which is what kv::scratch_sizes computes from the
// model's shapes. Backends place activations by this plan instead of
// allocating per tensor, so the memory a graph needs is known before it runs.
#pragma once

#include <hearth/engine/backend/graph.h>

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace hearth::backend {

// Every activation starts on this boundary (a cache line, and the widest
// SIMD load of the CPU kernels).
inline constexpr size_t kActivationAlign = 64;

// Bytes a tensor of `elements` floats takes in the arena.
inline constexpr uint64_t activation_slot_bytes(uint64_t elements) {
  return (elements * sizeof(float) + kActivationAlign - 1) / kActivationAlign * kActivationAlign;
}

// A byte range in use from graph node `first` through node `last`.
struct NodeSpan {
  size_t first = 0;
  size_t last = 0;
  uint64_t bytes = 0;
  bool operator==(const NodeSpan&) const = default;
};

// Offsets (by index of `spans`) at which spans whose node ranges overlap never
// share a byte: largest first (ties in the given order, so equal inputs give
// equal layouts), each at the lowest offset free for its whole span, rounded
// up to `align`. `total` gets the highest byte any span reaches.
std::vector<uint64_t> pack_node_spans(const std::vector<NodeSpan>& spans, uint64_t align, uint64_t& total);

struct ActivationPlan {
  // Byte offset of each activation, in the order the graph writes them.
  std::vector<std::pair<Tensor*, uint64_t>> offsets;
  uint64_t arena_bytes = 0;  // the highest byte any activation reaches
};

// Plans every activation of a graph that has no memory yet (data == null).
// Remembers the last plan: a graph with the same lifetimes and sizes as the
// previous one (every decode step, every full prefill batch) reuses it, so
// steady-state decode does not pay for planning.
class ActivationPlanner {
 public:
  const ActivationPlan& plan(const Graph& graph);

 private:
  // Per tensor: the node that writes it through its last reader.
  std::vector<NodeSpan> lifetimes_;
  std::vector<uint64_t> offsets_;  // by lifetimes_ index
  ActivationPlan plan_;
};

// A one-off plan (tests, estimates).
ActivationPlan plan_activations(const Graph& graph);

}  // namespace hearth::backend
