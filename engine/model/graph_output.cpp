#include "graph_output.h"

namespace hearth::model {

Status compute_into(backend::Backend& backend, backend::Graph& graph, std::vector<float>& out) {
  backend::Tensor* result = graph.output;
  out.resize(static_cast<size_t>(result->elements()));
  result->data = out.data();
  HEARTH_CHECK(backend.compute(graph));
  if (result->data != out.data()) {
    out.assign(result->as<const float>(), result->as<const float>() + result->elements());
  }
  return {};
}

}  // namespace hearth::model
