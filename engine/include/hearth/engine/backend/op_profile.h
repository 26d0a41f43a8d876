// Per-op summary of a profiled compute: the per-node times that
// Backend::op_timings() returns (GPU time on Vulkan, wall time on the CPU),
// summed by label. hearth-cli bench --profile prints it for prompt
// processing and generation.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace hearth::backend {

struct OpProfile {
  std::string op;      // the label: the node's op name (to_string(Op)), on the CPU with a product's weight type
  uint32_t count = 0;  // nodes of this op
  double ms = 0;       // their summed time
};

// Sums `timings` (label, ms) by label; the result is ordered by time, largest
// first (ties by name), so the costliest op leads the table.
std::vector<OpProfile> summarize_timings(std::span<const std::pair<std::string, double>> timings);

// Adds `more` into `into` by op (for several steps of generation).
void accumulate(std::vector<OpProfile>& into, const std::vector<OpProfile>& more);

}  // namespace hearth::backend
