// The activation planner on graphs built here: chains and random DAGs of
// element-wise ops. The checks are independent of how the planner places
// tensors: no two tensors alive at the same node share a byte, every tensor
// is aligned and inside the arena, the arena is at least the most bytes alive
// at one node (no placement can use less), and a repeated graph gets the same
// placement from the planner's memory.
#include <gtest/gtest.h>
#include <hearth/engine/backend/activation_plan.h>

#include <map>
#include <random>
#include <vector>

namespace hearth::backend {
namespace {

struct Span {
  size_t first, last;
  uint64_t offset, bytes;
};

// Lifetimes as the planner's contract states them: from the writing node
// through the last reader, the output to the end.
std::vector<Span> spans(const Graph& g, const ActivationPlan& plan) {
  std::map<const Tensor*, size_t> first, last;
  const auto& nodes = g.nodes();
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].dst) first.emplace(nodes[i].dst, i);
    for (const Tensor* s : nodes[i].src) {
      if (s && s->kind == TensorKind::Activation) last[s] = i;
    }
  }
  std::vector<Span> out;
  for (const auto& [t, offset] : plan.offsets) {
    const size_t end = t == g.output || !last.count(t) ? nodes.size() : last[t];
    out.push_back({first.at(t), end, offset, activation_slot_bytes(static_cast<uint64_t>(t->elements()))});
  }
  return out;
}

void check_plan(const Graph& g, const ActivationPlan& plan) {
  size_t activations = 0;
  for (const Node& n : g.nodes()) activations += n.dst != nullptr;
  ASSERT_EQ(plan.offsets.size(), activations);
  const auto s = spans(g, plan);
  uint64_t max_live = 0;
  for (size_t node = 0; node <= g.nodes().size(); ++node) {
    uint64_t live = 0;
    for (const Span& a : s) live += a.first <= node && node <= a.last ? a.bytes : 0;
    max_live = std::max(max_live, live);
  }
  for (size_t i = 0; i < s.size(); ++i) {
    EXPECT_EQ(s[i].offset % kActivationAlign, 0u);
    EXPECT_LE(s[i].offset + s[i].bytes, plan.arena_bytes);
    for (size_t j = i + 1; j < s.size(); ++j) {
      const bool same_time = s[i].first <= s[j].last && s[j].first <= s[i].last;
      const bool same_bytes = s[i].offset < s[j].offset + s[j].bytes && s[j].offset < s[i].offset + s[i].bytes;
      EXPECT_FALSE(same_time && same_bytes) << "tensors " << i << " and " << j << " overlap";
    }
  }
  EXPECT_GE(plan.arena_bytes, max_live);
}

TEST(ActivationPlan, ChainReusesMemoryAndKeepsTheOutput) {
  Graph g;
  int32_t dummy = 0;
  Tensor* x = g.input(DType::F32, {100, 3, 1, 1}, &dummy);
  Tensor* a = g.scale(x, 2.0f);   // 1200 bytes -> 1216
  Tensor* b = g.scale(a, 2.0f);
  Tensor* c = g.add(a, b);
  Tensor* d = g.scale(c, 0.5f);
  g.output = d;
  const ActivationPlan plan = plan_activations(g);
  check_plan(g, plan);
  // At most three are alive at once (a, b, c at the add).
  EXPECT_EQ(plan.arena_bytes, 3u * 1216);
}

TEST(ActivationPlan, RandomGraphsNeverOverlapAndRepeatTheirPlan) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    Graph g;
    int32_t dummy = 0;
    std::vector<Tensor*> live{g.input(DType::F32, {16, 1, 1, 1}, &dummy)};
    const int n_nodes = 2 + static_cast<int>(rng() % 40);
    for (int i = 0; i < n_nodes; ++i) {
      Tensor* a = live[rng() % live.size()];
      const int64_t width = 1 + static_cast<int64_t>(rng() % 300);
      Tensor* t = rng() % 3 == 0 && a->ne[0] == live.back()->ne[0] ? g.add(a, live.back()) : g.slice_cols(a, 0, std::min(width, a->ne[0]));
      if (rng() % 4 == 0) t = g.softcap(g.input(DType::F32, {width, 1, 1, 1}, &dummy), 1.0f);
      live.push_back(t);
    }
    g.output = live.back();
    ActivationPlanner planner;
    const ActivationPlan first = planner.plan(g);
    check_plan(g, first);
    const ActivationPlan again = planner.plan(g);
    EXPECT_EQ(again.arena_bytes, first.arena_bytes);
    EXPECT_EQ(again.offsets, first.offsets);
  }
}

TEST(ActivationPlan, TensorsWithMemoryAreNotPlanned) {
  Graph g;
  float buf[64] = {};
  Tensor* x = g.input(DType::F32, {64, 1, 1, 1}, buf);
  Tensor* a = g.scale(x, 1.0f);
  a->data = buf;  // placed by the caller
  g.output = g.scale(a, 1.0f);
  const ActivationPlan plan = plan_activations(g);
  ASSERT_EQ(plan.offsets.size(), 1u);
  EXPECT_EQ(plan.offsets[0].first, g.output);
  EXPECT_EQ(plan.arena_bytes, 256u);
}

// The packing the plan and the Vulkan kernel scratch share, on spans whose
// layout is worked out by hand. Placement goes by size, ties in input order:
// A (100) at 0; E (100) never meets A, also at 0; B meets E, so it goes past
// it, rounded up to 128; C meets A and B, so past both, 218 rounded to 256;
// D meets B and C but fits below B, at 0.
TEST(PackNodeSpans, SpansThatNeverMeetShareBytesAndTheOthersAreAligned) {
  const std::vector<NodeSpan> spans = {
      {0, 1, 100},  // A
      {2, 3, 90},   // B
      {1, 2, 50},   // C
      {2, 2, 10},   // D
      {3, 4, 100},  // E
  };
  uint64_t total = 0;
  const auto offsets = pack_node_spans(spans, 64, total);
  EXPECT_EQ(offsets, (std::vector<uint64_t>{0, 128, 256, 0, 0}));
  EXPECT_EQ(total, 306u);
}

}  // namespace
}  // namespace hearth::backend
