// Rewrites a backend may apply to a graph it was given, before planning its
// activations (so the plan sees the fused nodes' real lifetimes).
#pragma once

#include <hearth/engine/backend/graph.h>

#include <functional>

namespace hearth::backend {

// Each residual add right after a product that `fusible` accepts, whose
// result nothing else reads, becomes the product's residual (Node::src[3]):
// the product writes the add's output, and the add and its intermediate
// tensor leave the graph. A GPU saves a dispatch and a barrier per add
// (two per layer). The sum is the add's: (W x + bias) + residual, one
// rounding. Returns how many adds were fused.
int fuse_residual_adds(Graph& graph, const std::function<bool(const Node&)>& fusible);

}  // namespace hearth::backend
