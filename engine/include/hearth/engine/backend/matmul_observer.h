// An optional watcher of the weight products a backend runs: the importance
// matrix collector (quality/importance.h) reads every product's input
// activations through it. Off unless a caller installs one, so normal
// inference pays one null-pointer test per graph.
#pragma once

#include <hearth/engine/backend/graph.h>

namespace hearth::backend {

class MatmulObserver {
 public:
  virtual ~MatmulObserver() = default;
  // Called on the thread that runs the graph, just before `node` (a MatMul
  // or MatMulId) runs, when its input node.src[1] already holds its values
  // in host memory. node.src[0] is the weight (its GGUF name in `name`);
  // for MatMulId node.src[2] holds the expert ids (I32 {k, n_tokens}).
  // Must not change anything the graph reads.
  virtual void observe(const Node& node) = 0;
};

}  // namespace hearth::backend
