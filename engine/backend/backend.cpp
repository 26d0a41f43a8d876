#include "hearth/engine/backend/backend.h"

#include <fmt/format.h>

namespace hearth::backend {

Status check_supported(const Backend& backend, const Graph& graph) {
  for (const Node& n : graph.nodes()) {
    DType type = DType::F32;
    if (n.op == Op::MatMul || n.op == Op::GetRows || n.op == Op::MatMulId) type = n.src[0]->type;
    if (n.op == Op::KvStore || n.op == Op::Attention) {
      type = n.params.kv.type;
      if (n.params.kv.token_seq != nullptr && !backend.supports_sequence_batches()) {
        return make_error(ErrorCode::Unsupported,
                          fmt::format("the {} backend cannot run {} over several sequences in one pass "
                                      "(per-sequence block tables); run the whole model on the CPU or on Vulkan",
                                      backend.name(), to_string(n.op)));
      }
    }
    // Interleaved weights are made for the products and lookups that read
    // them through the CPU's kernels or copy_plain_rows; anything else would
    // read the groups as plain rows.
    if (n.op != Op::MatMul && n.op != Op::GetRows) {
      for (const Tensor* s : n.src) {
        if (s && s->layout != WeightLayout::Plain) {
          return make_error(ErrorCode::Unsupported,
                            fmt::format("{} cannot read the interleaved weight '{}'", to_string(n.op), s->name));
        }
      }
    }
    if (!backend.supports(n.op, type)) {
      const std::string what = n.op == Op::MatMul || n.op == Op::GetRows || n.op == Op::MatMulId
                                   ? fmt::format(" (tensor '{}')", n.src[0]->name)
                                   : std::string();
      return make_error(ErrorCode::Unsupported, fmt::format("the {} backend cannot run {} on {} data{}",
                                                            backend.name(), to_string(n.op),
                                                            traits(type).name, what));
    }
  }
  return {};
}

}  // namespace hearth::backend
