// Running a forward graph whose output is the logits.
#pragma once

#include <hearth/engine/backend/backend.h>

#include <vector>

namespace hearth::model {

// Computes `graph` with its output (graph.output, F32) ending in `out`. A
// backend that writes activations where their `data` already points (the
// CPU backend's planner leaves such tensors alone) writes the logits there
// directly: eight rows of a 152k vocabulary are 4.9 MB a batched decode step
// no longer copies. A backend with its own output memory (Vulkan's readback
// buffer) sets `data` itself, and the rows are copied from there.
Status compute_into(backend::Backend& backend, backend::Graph& graph, std::vector<float>& out);

}  // namespace hearth::model
