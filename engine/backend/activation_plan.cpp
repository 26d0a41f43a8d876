#include "hearth/engine/backend/activation_plan.h"

#include <algorithm>
#include <numeric>
#include <unordered_map>

namespace hearth::backend {

std::vector<uint64_t> pack_node_spans(const std::vector<NodeSpan>& spans, uint64_t align, uint64_t& total) {
  struct Placed {
    size_t first, last;
    uint64_t offset, bytes;
  };
  const uint64_t a = std::max<uint64_t>(align, 1);
  std::vector<size_t> order(spans.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) { return spans[x].bytes > spans[y].bytes; });
  std::vector<uint64_t> offsets(spans.size(), 0);
  std::vector<Placed> placed, overlapping;
  total = 0;
  for (size_t k : order) {
    const NodeSpan& t = spans[k];
    overlapping.clear();
    for (const Placed& p : placed) {
      if (p.first <= t.last && t.first <= p.last) overlapping.push_back(p);
    }
    std::sort(overlapping.begin(), overlapping.end(), [](const Placed& x, const Placed& y) { return x.offset < y.offset; });
    uint64_t offset = 0;
    for (const Placed& p : overlapping) {
      if (offset + t.bytes <= p.offset) break;
      offset = std::max(offset, (p.offset + p.bytes + a - 1) / a * a);
    }
    offsets[k] = offset;
    placed.push_back({t.first, t.last, offset, t.bytes});
    total = std::max(total, offset + t.bytes);
  }
  return offsets;
}

const ActivationPlan& ActivationPlanner::plan(const Graph& graph) {
  const auto& nodes = graph.nodes();
  const auto planned = [](const Tensor* t) { return t && t->kind == TensorKind::Activation && !t->data; };
  std::vector<Tensor*> tensors;
  std::unordered_map<const Tensor*, size_t> index;
  std::vector<NodeSpan> lifetimes;
  for (size_t i = 0; i < nodes.size(); ++i) {
    for (const Tensor* s : nodes[i].src) {
      if (auto it = index.find(s); it != index.end()) lifetimes[it->second].last = i;
    }
    Tensor* d = nodes[i].dst;
    if (planned(d) && !index.count(d)) {
      index.emplace(d, tensors.size());
      tensors.push_back(d);
      lifetimes.push_back({i, i, activation_slot_bytes(static_cast<uint64_t>(d->elements()))});
    }
  }
  // The output is read after the graph; a tensor nobody reads keeps its
  // place to the end rather than be overwritten by a later node.
  for (size_t k = 0; k < tensors.size(); ++k) {
    if (tensors[k] == graph.output || lifetimes[k].last == lifetimes[k].first) lifetimes[k].last = nodes.size();
  }

  if (lifetimes != lifetimes_) {
    lifetimes_ = std::move(lifetimes);
    offsets_ = pack_node_spans(lifetimes_, 1, plan_.arena_bytes);  // slot sizes keep every offset aligned
  }
  plan_.offsets.resize(tensors.size());
  for (size_t k = 0; k < tensors.size(); ++k) plan_.offsets[k] = {tensors[k], offsets_[k]};
  return plan_;
}

ActivationPlan plan_activations(const Graph& graph) {
  ActivationPlanner planner;
  return planner.plan(graph);
}

}  // namespace hearth::backend
