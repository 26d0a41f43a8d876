// Profiling of the Vulkan backend: a fixture model's prefill and decode steps
// run with timestamp queries; the per-op times must be present and positive,
// add up to no more than the step's wall time, and the per-op counts must
// equal the graph's node counts (computed here from the graph itself, as the
// backend ran it: the residual adds of one-token products are fused into
// them, so a decode step dispatches no add at all).
#include <gtest/gtest.h>
#include <hearth/engine/backend/op_profile.h>
#include <hearth/engine/backend/vulkan/vulkan_backend.h>
#include <hearth/engine/kv/kv_cache.h>
#include <hearth/engine/model/model.h>

#include <chrono>
#include <map>
#include <numeric>

#include "../../model/fixture_logits.h"
#include "vulkan_test_env.h"

namespace hearth::vulkan {
namespace {

using hearth::testing::data_path;

struct Step {
  double wall_ms = 0;
  std::map<std::string, uint32_t> nodes;  // op name -> nodes in the graph
};

// Builds and runs one forward step, timing compute() on the host.
Step run_step(VulkanBackend& be, const model::Model& m, kv::KvCache& cache, std::span<const int32_t> ids,
              std::span<const int32_t> pos) {
  backend::Graph graph;
  m.build_forward(graph, model::Batch{ids, pos}, cache, model::LogitsRows::Last);
  Step s;
  const auto t0 = std::chrono::steady_clock::now();
  const auto st = be.compute(graph);
  s.wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_TRUE(st.ok()) << st.error().message;
  for (const auto& n : graph.nodes()) s.nodes[backend::to_string(n.op)] += 1;
  cache.set_used(cache.used() + static_cast<int64_t>(ids.size()));
  return s;
}

void check_profile(const VulkanBackend& be, const Step& step, const char* phase) {
  const auto timings = be.op_timings();
  const auto ops = backend::summarize_timings(timings);
  ASSERT_EQ(ops.size(), step.nodes.size()) << phase;
  double sum = 0;
  for (const auto& o : ops) {
    ASSERT_TRUE(step.nodes.count(o.op)) << phase << ": op " << o.op << " is not in the graph";
    EXPECT_EQ(o.count, step.nodes.at(o.op)) << phase << ": " << o.op;
    EXPECT_GT(o.ms, 0.0) << phase << ": " << o.op;
    sum += o.ms;
  }
  EXPECT_LE(sum, step.wall_ms) << phase;
  EXPECT_GT(sum, 0.0) << phase;
}

TEST(VulkanProfile, PerOpTimesOfPrefillAndDecode) {
  VulkanConfig cfg = testing::test_config();
  cfg.profiling = ProfilingMode::Timestamps;
  auto be = VulkanBackend::create(cfg);
  ASSERT_TRUE(be.ok()) << be.error().message;
  auto model = model::Model::load(data_path("models/tiny-qwen2-q4_k_m.gguf"));
  ASSERT_TRUE(model.ok()) << model.error().message;
  auto cache = kv::KvCache::create(**be, (*model)->kv_config(64, DType::F16));
  ASSERT_TRUE(cache.ok()) << cache.error().message;

  std::vector<int32_t> ids = {1, 5, 9, 13, 17, 21, 25, 29, 33};
  std::vector<int32_t> pos(ids.size());
  std::iota(pos.begin(), pos.end(), 0);
  const Step prefill = run_step(**be, **model, **cache, ids, pos);
  check_profile(**be, prefill, "prefill");
  // Nine tokens take the prompt tiles, which keep their adds; the last
  // layer computes one row (model::KeptRows), whose products are matvecs.
  const auto layers = static_cast<uint32_t>((*model)->hparams().n_layer);
  ASSERT_TRUE(prefill.nodes.count("add"));
  EXPECT_EQ(prefill.nodes.at("add"), 2 * (layers - 1));

  // Two decode steps: the second resubmits the first's recording, and its
  // timestamps must be read from that second run.
  for (int32_t i = 0; i < 2; ++i) {
    const int32_t id = 7 + i, p = static_cast<int32_t>(ids.size()) + i;
    const Step decode = run_step(**be, **model, **cache, std::span(&id, 1), std::span(&p, 1));
    check_profile(**be, decode, "decode");
    EXPECT_EQ(decode.nodes.count("add"), 0u) << "a decode step's residual adds join its products";
  }
  EXPECT_GE((*be)->stats().reuses, 1u);
}

TEST(VulkanProfile, NoTimingsWithoutProfiling) {
  auto be = VulkanBackend::create(testing::test_config());
  ASSERT_TRUE(be.ok()) << be.error().message;
  auto model = model::Model::load(data_path("models/tiny-qwen2-q4_k_m.gguf"));
  ASSERT_TRUE(model.ok()) << model.error().message;
  auto cache = kv::KvCache::create(**be, (*model)->kv_config(16, DType::F16));
  ASSERT_TRUE(cache.ok()) << cache.error().message;
  const int32_t id = 3, p = 0;
  run_step(**be, **model, **cache, std::span(&id, 1), std::span(&p, 1));
  EXPECT_TRUE((*be)->op_timings().empty());
}

TEST(VulkanProfile, SummaryAddsUpByOp) {
  // Independent of the device: the summary of known spans.
  const std::vector<std::pair<std::string, double>> t = {
      {"matmul", 2.0}, {"add", 0.5}, {"matmul", 3.0}, {"rope", 0.25}, {"add", 0.25}};
  const auto ops = backend::summarize_timings(t);
  ASSERT_EQ(ops.size(), 3u);
  EXPECT_EQ(ops[0].op, "matmul");
  EXPECT_EQ(ops[0].count, 2u);
  EXPECT_DOUBLE_EQ(ops[0].ms, 5.0);
  EXPECT_EQ(ops[1].op, "add");
  EXPECT_EQ(ops[1].count, 2u);
  EXPECT_DOUBLE_EQ(ops[1].ms, 0.75);
  EXPECT_EQ(ops[2].op, "rope");
  std::vector<backend::OpProfile> total;
  backend::accumulate(total, ops);
  backend::accumulate(total, ops);
  EXPECT_EQ(total[0].count, 4u);
  EXPECT_DOUBLE_EQ(total[0].ms, 10.0);
}

}  // namespace
}  // namespace hearth::vulkan
