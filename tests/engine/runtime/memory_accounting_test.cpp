// The memory estimate is what the engine allocates: for every fixture model,
// after a load, a prefill of several batches and a few decoded tokens on the
// CPU backend, the bytes the backend counts (KV buffer, activation arena and
// conversion buffer, their high-water mark) equal kv::estimate_memory's parts
// byte for byte, and nothing grew past the reservation. The activation part is
// also held to a reference computed here from the real forward graph: the most
// bytes its activations occupy at once (each live tensor rounded to the
// arena's alignment), which no placement can beat.
#include <gtest/gtest.h>
#include <hearth/engine/backend/activation_plan.h>
#include <hearth/engine/backend/cpu_backend.h>
#include <hearth/engine/kv/memory_estimate.h>
#include <hearth/engine/runtime/session.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <numeric>

#include "../model/fixture_logits.h"
#include "runtime_fixture.h"
#include "windowed_model.h"

namespace hearth::runtime {
namespace {

using hearth::testing::data_path;
using hearth::testing::FixtureCase;
using hearth::testing::kFixtureCases;

// Largest sum of the slot sizes of the activations alive at one time, with
// the lifetimes written out independently of the planner: a tensor lives from
// the node that writes it through its last reader (the output to the end).
uint64_t max_live_bytes(const backend::Graph& graph) {
  const auto& nodes = graph.nodes();
  std::map<const backend::Tensor*, size_t> first, last;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].dst && nodes[i].dst->kind == backend::TensorKind::Activation) first.emplace(nodes[i].dst, i);
    for (const backend::Tensor* t : nodes[i].src) {
      if (t && t->kind == backend::TensorKind::Activation) last[t] = i;
    }
  }
  uint64_t best = 0;
  for (size_t i = 0; i < nodes.size(); ++i) {
    uint64_t live = 0;
    for (const auto& [t, born] : first) {
      const size_t dies = t == graph.output || !last.count(t) ? nodes.size() : last[t];
      if (born <= i && i <= dies) live += (static_cast<uint64_t>(t->elements()) * 4 + 63) / 64 * 64;
    }
    best = std::max(best, live);
  }
  return best;
}

struct Config {
  int64_t n_ctx;
  int32_t n_batch;
  DType kv_type;
};

class MemoryAccounting : public ::testing::TestWithParam<FixtureCase> {};

TEST_P(MemoryAccounting, EstimateEqualsWhatTheCpuBackendAllocates) {
  const std::string path = data_path(std::string("models/") + GetParam().model);
  auto loaded = model::Model::load(path);
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  const model::Model& m = **loaded;
  const auto n_vocab = static_cast<int32_t>(m.hparams().n_vocab);

  for (Config c : {Config{128, 32, DType::F16}, Config{512, 256, DType::Q8_0}, Config{40, 256, DType::F32}}) {
    SCOPED_TRACE(::testing::Message() << "n_ctx " << c.n_ctx << " n_batch " << c.n_batch);
    // Heads that are not whole Q8_0 blocks (stories260K) use an F16 cache.
    if (c.kv_type == DType::Q8_0 && m.hparams().head_dim % 32 != 0) c.kv_type = DType::F16;
    auto estimate = kv::estimate_memory(m.memory_dims(), std::filesystem::file_size(path), c.n_ctx, c.kv_type,
                                        c.n_batch);
    ASSERT_TRUE(estimate.ok()) << estimate.error().message;
    // Weights are used in place from the mapped file: the whole file, and
    // no backend copy.
    EXPECT_EQ(m.file().file_size(), estimate->weights_bytes);

    auto be = backend::make_cpu_backend({1});
    {
      auto session = Session::create(m, *be, SessionConfig{c.n_ctx, c.kv_type, c.n_batch});
      ASSERT_TRUE(session.ok()) << session.error().message;
      const int64_t n_decode = 4;
      const auto prompt = testing::synthetic_tokens(static_cast<size_t>(c.n_ctx - n_decode), 7, n_vocab);
      ASSERT_TRUE((*session)->prefill(prompt).ok());
      for (int64_t i = 0; i < n_decode; ++i) {
        const auto logits = (*session)->last_logits();
        const auto next = static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
        ASSERT_TRUE((*session)->decode(next).ok());
      }
      ASSERT_EQ((*session)->context().size(), static_cast<size_t>(c.n_ctx));

      const backend::MemoryUse use = be->memory_use();
      EXPECT_EQ(use.weights_bytes, 0u);
      EXPECT_EQ(use.kv_bytes, estimate->kv_bytes);
      EXPECT_EQ(use.scratch_bytes, estimate->scratch_bytes);
      EXPECT_EQ(use.scratch_high_water_bytes, estimate->scratch_bytes);
      EXPECT_EQ(use.scratch_growths, 0u);
      EXPECT_EQ(estimate->total_bytes, estimate->weights_bytes + use.kv_bytes + use.scratch_bytes);
    }
    EXPECT_EQ(be->memory_use().kv_bytes, 0u) << "the KV buffer is released with its session";

    // The arena is no larger than the activations of a full batch need.
    const int64_t n = std::min<int64_t>(c.n_batch, c.n_ctx);
    auto cache = kv::KvCache::create(*be, m.kv_config(c.n_ctx, c.kv_type));
    ASSERT_TRUE(cache.ok());
    std::vector<int32_t> ids = testing::synthetic_tokens(static_cast<size_t>(n), 3, n_vocab), pos(ids.size());
    std::iota(pos.begin(), pos.end(), 0);
    backend::Graph graph;
    m.build_forward(graph, model::Batch{ids, pos}, **cache, model::LogitsRows::Last);
    const uint64_t reference = max_live_bytes(graph);
    const uint64_t planned = backend::plan_activations(graph).arena_bytes;
    std::printf("%s n_ctx %lld n_batch %d: estimate %llu activation + %llu conversion, plan %llu, max live %llu\n",
                GetParam().model, static_cast<long long>(c.n_ctx), c.n_batch,
                static_cast<unsigned long long>(estimate->scratch.activation_bytes),
                static_cast<unsigned long long>(estimate->scratch.conversion_bytes),
                static_cast<unsigned long long>(planned), static_cast<unsigned long long>(reference));
    EXPECT_EQ(estimate->scratch.activation_bytes, reference);
    EXPECT_EQ(planned, reference);
  }
}

// A model with sliding-window layers (tiny Gemma 2, window 24 on the even
// layers): the estimate counts their rings, and that is what the session
// allocates, also when the rings are rounded up to the whole context.
TEST(MemoryAccountingWindowed, EstimateEqualsWhatTheCpuBackendAllocates) {
  const auto file = testing::write_windowed_model(testing::WindowedModelSpec{}, "accounting");
  const std::string& path = file.path();
  auto loaded = model::Model::load(path);
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  const model::Model& m = **loaded;
  const auto n_vocab = static_cast<int32_t>(m.hparams().n_vocab);
  for (Config c : {Config{512, 16, DType::F16}, Config{300, 64, DType::Q8_0}, Config{64, 256, DType::F32}}) {
    SCOPED_TRACE(::testing::Message() << "n_ctx " << c.n_ctx << " n_batch " << c.n_batch);
    auto estimate = kv::estimate_memory(m.memory_dims(), std::filesystem::file_size(path), c.n_ctx, c.kv_type,
                                        c.n_batch);
    ASSERT_TRUE(estimate.ok()) << estimate.error().message;
    auto be = backend::make_cpu_backend({1});
    auto session = Session::create(m, *be, SessionConfig{c.n_ctx, c.kv_type, c.n_batch});
    ASSERT_TRUE(session.ok()) << session.error().message;
    ASSERT_TRUE((*session)->prefill(testing::synthetic_tokens(static_cast<size_t>(c.n_ctx - 2), 7, n_vocab)).ok());
    ASSERT_TRUE((*session)->decode(5).ok());
    const backend::MemoryUse use = be->memory_use();
    EXPECT_EQ(use.kv_bytes, estimate->kv_bytes);
    EXPECT_EQ(use.scratch_bytes, estimate->scratch_bytes);
    EXPECT_EQ(use.scratch_growths, 0u);
    auto full = kv::kv_cache_bytes(m.hparams().n_layer, m.hparams().n_head_kv, m.hparams().head_dim, c.n_ctx,
                                   c.kv_type);
    ASSERT_TRUE(full.ok());
    // The rings save memory unless window + batch reaches the context.
    EXPECT_EQ(estimate->kv_bytes < *full, (*session)->cache().has_rings());
  }
}

// Mixture of experts (the tiny qwen3moe fixtures): the activation estimate
// is the most bytes the real forward graph's activations occupy at once, the
// conversion and expert-gathering buffers are reserved up front and never
// grow. (The arena's greedy placement needs one more slot than that on this
// shape, whose expert width times experts used equals n_embd; the CPU backend
// grows the arena and counts it, so only those buffers are held exact here.)
TEST(MemoryAccountingMoe, ActivationEstimateIsTheGraphsLargestLiveSet) {
  for (const FixtureCase& fc : hearth::testing::kMoeFixtureCases) {
    const std::string path = data_path(std::string("models/") + fc.model);
    auto loaded = model::Model::load(path);
    ASSERT_TRUE(loaded.ok()) << loaded.error().message;
    const model::Model& m = **loaded;
    const auto n_vocab = static_cast<int32_t>(m.hparams().n_vocab);
    for (Config c : {Config{128, 32, DType::F16}, Config{512, 256, DType::Q8_0}, Config{40, 1, DType::F16}}) {
      SCOPED_TRACE(::testing::Message() << fc.model << " n_ctx " << c.n_ctx << " n_batch " << c.n_batch);
      auto estimate = kv::estimate_memory(m.memory_dims(), std::filesystem::file_size(path), c.n_ctx, c.kv_type,
                                          c.n_batch);
      ASSERT_TRUE(estimate.ok()) << estimate.error().message;
      EXPECT_GT(estimate->scratch.expert_bytes, 0u);
      const int64_t n = std::min<int64_t>(c.n_batch, c.n_ctx);
      auto be = backend::make_cpu_backend({1});
      {
        auto cache = kv::KvCache::create(*be, m.kv_config(c.n_ctx, c.kv_type));
        ASSERT_TRUE(cache.ok());
        std::vector<int32_t> ids = testing::synthetic_tokens(static_cast<size_t>(n), 3, n_vocab), pos(ids.size());
        std::iota(pos.begin(), pos.end(), 0);
        backend::Graph graph;
        m.build_forward(graph, model::Batch{ids, pos}, **cache, model::LogitsRows::Last);
        EXPECT_EQ(estimate->scratch.activation_bytes, max_live_bytes(graph));
      }

      // The matrix products' buffers: what was reserved is what is held
      // after a prefill and decoding, for every batch size.
      auto session = Session::create(m, *be, SessionConfig{c.n_ctx, c.kv_type, c.n_batch});
      ASSERT_TRUE(session.ok()) << session.error().message;
      const backend::MemoryUse before = be->memory_use();
      ASSERT_TRUE((*session)->prefill(testing::synthetic_tokens(static_cast<size_t>(c.n_ctx - 2), 7, n_vocab)).ok());
      ASSERT_TRUE((*session)->decode(5).ok());
      const backend::MemoryUse after = be->memory_use();
      EXPECT_EQ(after.kv_bytes, estimate->kv_bytes);
      const uint64_t arena_growth = after.scratch_bytes - before.scratch_bytes;
      EXPECT_EQ(before.scratch_bytes, estimate->scratch_bytes);
      // Whatever grew is the arena alone: at most one residual-width slot.
      EXPECT_LE(arena_growth, backend::activation_slot_bytes(static_cast<uint64_t>(n * m.hparams().n_embd)));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, MemoryAccounting, ::testing::ValuesIn(kFixtureCases),
                         [](const ::testing::TestParamInfo<FixtureCase>& p) { return hearth::testing::fixture_case_name(p.param); });

}  // namespace
}  // namespace hearth::runtime
