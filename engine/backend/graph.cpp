#include "hearth/engine/backend/graph.h"

#include <cassert>

namespace hearth::backend {

const char* to_string(Op op) {
  switch (op) {
    case Op::GetRows: return "get_rows";
    case Op::RmsNorm: return "rms_norm";
    case Op::MatMul: return "matmul";
    case Op::Add: return "add";
    case Op::Scale: return "scale";
    case Op::Rope: return "rope";
    case Op::KvStore: return "kv_store";
    case Op::Attention: return "attention";
    case Op::SwiGlu: return "swiglu";
    case Op::GeluGlu: return "geglu";
    case Op::SoftCap: return "softcap";
    case Op::SliceCols: return "slice_cols";
    case Op::LastRows: return "last_rows";
    case Op::TopK: return "top_k";
    case Op::MoeGate: return "moe_gate";
    case Op::MatMulId: return "matmul_id";
    case Op::MoeSum: return "moe_sum";
    case Op::SwiGluOai: return "swiglu_oai";
    case Op::AddId: return "add_id";
    case Op::LayerNorm: return "layer_norm";
    case Op::Gelu: return "gelu";
  }
  return "?";
}

Tensor* Graph::input(DType type, std::array<int64_t, 4> ne, void* data) {
  Tensor& t = tensors_.emplace_back();
  t.type = type;
  t.ne = ne;
  t.kind = TensorKind::Input;
  t.data = data;
  return &t;
}

const int32_t* Graph::hold(std::vector<int32_t> values) { return held_.emplace_back(std::move(values)).data(); }

Tensor* Graph::activation(std::array<int64_t, 4> ne) {
  Tensor& t = tensors_.emplace_back();
  t.type = DType::F32;
  t.ne = ne;
  t.kind = TensorKind::Activation;
  return &t;
}

Node& Graph::push(Op op, Tensor* dst, Tensor* a, Tensor* b, Tensor* c) {
  Node& n = nodes_.emplace_back();
  n.op = op;
  n.dst = dst;
  n.src = {a, b, c};
  n.layer = layer_;
  return n;
}

Tensor* Graph::get_rows(Tensor* weight, Tensor* ids) {
  Tensor* dst = activation({weight->ne[0], ids->ne[0], 1, 1});
  push(Op::GetRows, dst, weight, ids);
  return dst;
}

Tensor* Graph::rms_norm(Tensor* x, Tensor* weight, float eps, int64_t group) {
  Tensor* dst = activation(x->ne);
  Node& n = push(Op::RmsNorm, dst, x, weight);
  n.params.eps = eps;
  n.params.group = group > 0 ? group : x->ne[0];
  assert(x->ne[0] % n.params.group == 0);
  return dst;
}

Tensor* Graph::matmul(Tensor* weight, Tensor* x, Tensor* bias) {
  assert(weight->ne[0] == x->ne[0]);
  Tensor* dst = activation({weight->ne[1], x->ne[1], 1, 1});
  push(Op::MatMul, dst, weight, x, bias);
  return dst;
}

Tensor* Graph::add(Tensor* a, Tensor* b) {
  assert(a->ne == b->ne);
  Tensor* dst = activation(a->ne);
  push(Op::Add, dst, a, b);
  return dst;
}

Tensor* Graph::scale(Tensor* x, float s) {
  Tensor* dst = activation(x->ne);
  push(Op::Scale, dst, x).params.scalar = s;
  return dst;
}

Tensor* Graph::rope(Tensor* x, Tensor* positions, const RopeParams& p) {
  Tensor* dst = activation(x->ne);
  push(Op::Rope, dst, x, positions).params.rope = p;
  return dst;
}

void Graph::kv_store(Tensor* k, Tensor* v, Tensor* positions, const KvView& kv) {
  push(Op::KvStore, nullptr, k, v, positions).params.kv = kv;
}

Tensor* Graph::attention(Tensor* q, Tensor* positions, const KvView& kv, const AttentionParams& p, Tensor* sinks) {
  assert(!sinks || (sinks->type == DType::F32 && sinks->ne[0] == p.n_head));
  Tensor* dst = activation({static_cast<int64_t>(p.n_head) * p.head_dim, q->ne[1], 1, 1});
  Node& n = push(Op::Attention, dst, q, positions, sinks);
  n.params.kv = kv;
  n.params.attn = p;
  return dst;
}

Tensor* Graph::swiglu(Tensor* gate, Tensor* up) {
  Tensor* dst = activation(gate->ne);
  push(Op::SwiGlu, dst, gate, up);
  return dst;
}

Tensor* Graph::swiglu_oai(Tensor* gate, Tensor* up, const GluParams& p) {
  assert(gate->ne == up->ne);
  Tensor* dst = activation(gate->ne);
  push(Op::SwiGluOai, dst, gate, up).params.glu = p;
  return dst;
}

Tensor* Graph::geglu(Tensor* gate, Tensor* up) {
  Tensor* dst = activation(gate->ne);
  push(Op::GeluGlu, dst, gate, up);
  return dst;
}

Tensor* Graph::softcap(Tensor* x, float cap) {
  Tensor* dst = activation(x->ne);
  push(Op::SoftCap, dst, x).params.scalar = cap;
  return dst;
}

Tensor* Graph::slice_cols(Tensor* x, int64_t offset, int64_t width) {
  Tensor* dst = activation({width, x->ne[1], 1, 1});
  push(Op::SliceCols, dst, x).params.offset = offset;
  return dst;
}

Tensor* Graph::last_rows(Tensor* x, int64_t n) {
  Tensor* dst = activation({x->ne[0], n, 1, 1});
  push(Op::LastRows, dst, x);
  return dst;
}

Tensor* Graph::layer_norm(Tensor* x, Tensor* weight, Tensor* bias, float eps) {
  assert(weight->ne[0] == x->ne[0] && bias->ne[0] == x->ne[0]);
  Tensor* dst = activation(x->ne);
  push(Op::LayerNorm, dst, x, weight, bias).params.eps = eps;
  return dst;
}

Tensor* Graph::gelu(Tensor* x) {
  Tensor* dst = activation(x->ne);
  push(Op::Gelu, dst, x);
  return dst;
}

Tensor* Graph::top_k(Tensor* scores, int64_t k) {
  assert(k > 0 && k <= scores->ne[0]);
  Tensor* dst = activation({k, scores->ne[1], 1, 1});
  dst->type = DType::I32;
  push(Op::TopK, dst, scores);
  return dst;
}

Tensor* Graph::moe_gate(Tensor* logits, Tensor* ids, const MoeParams& p) {
  assert(ids->ne[1] == logits->ne[1]);
  Tensor* dst = activation({ids->ne[0], ids->ne[1], 1, 1});
  push(Op::MoeGate, dst, logits, ids).params.moe = p;
  return dst;
}

Tensor* Graph::matmul_id(Tensor* experts, Tensor* x, Tensor* ids) {
  const int64_t k = ids->ne[0], n = ids->ne[1];
  assert(experts->ne[0] == x->ne[0] && (x->ne[1] == n || x->ne[1] == k * n));
  Tensor* dst = activation({experts->ne[1], k * n, 1, 1});
  push(Op::MatMulId, dst, experts, x, ids);
  return dst;
}

Tensor* Graph::moe_sum(Tensor* y, Tensor* weights) {
  const int64_t k = weights->ne[0], n = weights->ne[1];
  assert(y->ne[1] == k * n);
  Tensor* dst = activation({y->ne[0], n, 1, 1});
  push(Op::MoeSum, dst, y, weights);
  return dst;
}

Tensor* Graph::add_id(Tensor* y, Tensor* bias, Tensor* ids) {
  assert(bias->ne[0] == y->ne[0] && y->ne[1] == ids->ne[0] * ids->ne[1]);
  Tensor* dst = activation(y->ne);
  push(Op::AddId, dst, y, bias, ids);
  return dst;
}

}  // namespace hearth::backend
