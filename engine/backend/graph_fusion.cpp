#include "hearth/engine/backend/graph_fusion.h"

#include <unordered_map>

namespace hearth::backend {

int fuse_residual_adds(Graph& graph, const std::function<bool(const Node&)>& fusible) {
  auto& nodes = graph.nodes();
  // How many sources read each tensor: a product whose result has a reader
  // besides its add keeps that result.
  std::unordered_map<const Tensor*, int> readers;
  for (const Node& n : nodes) {
    for (const Tensor* s : n.src) {
      if (s) ++readers[s];
    }
  }
  int fused = 0;
  std::vector<Node> out;
  out.reserve(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    Node n = nodes[i];
    if (n.op == Op::MatMul && !n.src[3] && i + 1 < nodes.size() && n.dst != graph.output &&
        readers[n.dst] == 1 && fusible(n)) {
      const Node& add = nodes[i + 1];
      Tensor* other = add.src[0] == n.dst ? add.src[1] : add.src[1] == n.dst ? add.src[0] : nullptr;
      if (add.op == Op::Add && other && other != n.dst && other->elements() == n.dst->elements() &&
          add.dst->elements() == n.dst->elements()) {
        n.src[3] = other;
        n.dst = add.dst;
        out.push_back(n);
        ++i;  // the add is now part of the product
        ++fused;
        continue;
      }
    }
    out.push_back(n);
  }
  nodes = std::move(out);
  return fused;
}

}  // namespace hearth::backend
