// The Vulkan backend's scratch is reserved before the first token and counted:
// after reserve_scratch with kv::scratch_sizes, a prefill batch and decode
// steps run on the device with zero growths, and the device activation arena
// is the estimate's activation bytes exactly (the CPU-only parts of the
// reservation never reach the GPU). The logits of those steps are checked
// against the reference engine's (tolerances from tests/data/FIXTURES-README.md)
// so an exactly sized arena is also a correct one. A graph larger than the
// reservation grows the arena and says so; a reservation no device can hold is
// an OutOfMemory error naming the bytes; the split backend reserves on both
// sides.
#include <gtest/gtest.h>
#include <hearth/engine/backend/activation_plan.h>
#include <hearth/engine/backend/cpu_backend.h>
#include <hearth/engine/backend/split_backend.h>
#include <hearth/engine/backend/vulkan/vulkan_backend.h>
#include <hearth/engine/kv/memory_estimate.h>
#include <hearth/engine/model/model.h>
#include <hearth/engine/runtime/session.h>

#include <numeric>
#include <ostream>
#include <string>
#include <vector>

#include "../../model/fixture_logits.h"
#include "vulkan_test_env.h"

namespace hearth::vulkan {
namespace {

using hearth::testing::compare_logits;
using hearth::testing::data_path;
using hearth::testing::read_f32;
using hearth::testing::read_ids;

constexpr int kDecodeSteps = 4;

// A context length and prompt batch the session would be created with.
struct Setting {
  int64_t n_ctx;
  int64_t n_batch;
};

struct ScratchCase {
  const char* model;
  double min_cosine;  // the weight class's floor (FIXTURES-README)
  Setting setting;
};

// gtest prints the case by this instead of its bytes.
void PrintTo(const ScratchCase& c, std::ostream* os) {
  *os << c.model << " n_ctx " << c.setting.n_ctx << " n_batch " << c.setting.n_batch;
}

std::string case_name(const ::testing::TestParamInfo<ScratchCase>& info) {
  hearth::testing::FixtureCase c{info.param.model, "", 0, 0};
  return hearth::testing::fixture_case_name(c) + "_ctx" + std::to_string(info.param.setting.n_ctx) + "_batch" +
         std::to_string(info.param.setting.n_batch);
}

std::unique_ptr<VulkanBackend> make_vulkan() {
  auto vk = VulkanBackend::create(testing::test_config());
  EXPECT_TRUE(vk.ok()) << (vk.ok() ? "" : vk.error().message);
  return vk.ok() ? std::move(vk).value() : nullptr;
}

std::unique_ptr<model::Model> load(const std::string& name) {
  auto m = model::Model::load(data_path("models/" + name));
  EXPECT_TRUE(m.ok()) << (m.ok() ? "" : m.error().message);
  return m.ok() ? std::move(m).value() : nullptr;
}

// Runs the first n_batch tokens of tokens.txt as one batch, then
// kDecodeSteps tokens one by one, on `be`; returns the last-row logits of
// every step (rows n_batch - 1 .. n_batch - 1 + kDecodeSteps of the reference).
std::vector<float> prefill_and_decode(const model::Model& m, backend::Backend& be, kv::KvCache& cache,
                                      const std::vector<int32_t>& ids, int64_t n_batch) {
  std::vector<int32_t> pos(ids.size());
  std::iota(pos.begin(), pos.end(), 0);
  const auto n = static_cast<size_t>(n_batch);
  std::vector<float> rows, logits;
  auto st = m.forward(be, cache, model::Batch{std::span(ids).first(n), std::span(pos).first(n)},
                      model::LogitsRows::Last, logits);
  EXPECT_TRUE(st.ok()) << (st.ok() ? "" : st.error().message);
  if (!st.ok()) return {};
  rows.insert(rows.end(), logits.begin(), logits.end());
  for (size_t i = n; i < n + kDecodeSteps; ++i) {
    st = m.forward(be, cache, model::Batch{std::span(ids).subspan(i, 1), std::span(pos).subspan(i, 1)},
                   model::LogitsRows::Last, logits);
    EXPECT_TRUE(st.ok()) << (st.ok() ? "" : st.error().message);
    if (!st.ok()) return {};
    rows.insert(rows.end(), logits.begin(), logits.end());
  }
  return rows;
}

// The reference logits of the rows prefill_and_decode returns.
std::vector<float> reference_rows(const std::string& model, size_t n_vocab, int64_t n_batch) {
  const auto all = read_f32(data_path("models/" + model + ".logits.f32"));
  const size_t first = static_cast<size_t>(n_batch - 1) * n_vocab;
  const size_t count = static_cast<size_t>(kDecodeSteps + 1) * n_vocab;
  if (all.size() < first + count) return {};
  return {all.begin() + static_cast<std::ptrdiff_t>(first), all.begin() + static_cast<std::ptrdiff_t>(first + count)};
}

class VulkanScratch : public ::testing::TestWithParam<ScratchCase> {};

TEST_P(VulkanScratch, ArenaIsTheEstimateAndDoesNotGrow) {
  const ScratchCase& c = GetParam();
  auto be = make_vulkan();
  ASSERT_TRUE(be);
  auto m = load(c.model);
  ASSERT_TRUE(m);
  const auto ids = read_ids(data_path("models/tokens.txt"));
  ASSERT_GE(static_cast<int64_t>(ids.size()), c.setting.n_batch + kDecodeSteps);
  ASSERT_GE(c.setting.n_ctx, c.setting.n_batch + kDecodeSteps);
  auto sizes = kv::scratch_sizes(m->memory_dims(), c.setting.n_ctx, c.setting.n_batch);
  ASSERT_TRUE(sizes.ok()) << sizes.error().message;

  // Reserved up front: the arena is on the device before any graph runs,
  // and only the arena (the conversion and tile bytes are CPU scratch).
  const uint64_t used_before = be->stats().used_bytes;
  ASSERT_TRUE(be->reserve_scratch({sizes->activation_bytes, sizes->matmul_bytes()}).ok());
  EXPECT_GE(be->stats().used_bytes - used_before, sizes->activation_bytes);
  EXPECT_EQ(be->stats().activation_bytes, sizes->activation_bytes);
  EXPECT_EQ(be->memory_use().scratch_bytes, sizes->activation_bytes);
  EXPECT_EQ(be->memory_use().scratch_growths, 0u);

  auto cache = kv::KvCache::create(*be, m->kv_config(c.setting.n_ctx, DType::F16));
  ASSERT_TRUE(cache.ok()) << cache.error().message;
  {
    // The prefill batch's plan needs the whole estimate: the arena is not
    // padding that hides a larger need.
    std::vector<int32_t> pos(static_cast<size_t>(c.setting.n_batch));
    std::iota(pos.begin(), pos.end(), 0);
    backend::Graph graph;
    m->build_forward(graph, model::Batch{std::span(ids).first(pos.size()), pos}, **cache, model::LogitsRows::Last);
    EXPECT_EQ(backend::plan_activations(graph).arena_bytes, sizes->activation_bytes);
  }

  const auto got = prefill_and_decode(*m, *be, **cache, ids, c.setting.n_batch);
  const size_t n_vocab = static_cast<size_t>(m->hparams().n_vocab);
  const auto ref = reference_rows(c.model, n_vocab, c.setting.n_batch);
  ASSERT_FALSE(ref.empty());
  ASSERT_EQ(got.size(), ref.size());
  EXPECT_GE(compare_logits(got, ref, n_vocab).min_cosine, c.min_cosine);

  const backend::MemoryUse use = be->memory_use();
  EXPECT_EQ(use.scratch_bytes, sizes->activation_bytes);
  EXPECT_EQ(use.scratch_high_water_bytes, sizes->activation_bytes);
  EXPECT_EQ(use.scratch_growths, 0u);
  EXPECT_EQ(be->stats().activation_bytes, sizes->activation_bytes);
  // The staging buffers exist (inputs went up, logits came back) but are
  // host-visible memory outside the device scratch.
  EXPECT_GT(be->stats().staging_bytes, 0u);
  EXPECT_EQ(use.weights_bytes, be->stats().weight_bytes);
  EXPECT_GT(use.weights_bytes, 0u);
  const auto kv = m->kv_config(c.setting.n_ctx, DType::F16);
  auto kv_bytes = kv::kv_cache_bytes(kv.n_layer, kv.n_head_kv, kv.head_dim, c.setting.n_ctx, DType::F16);
  ASSERT_TRUE(kv_bytes.ok());
  EXPECT_EQ(use.kv_bytes, *kv_bytes);
}

constexpr Setting kShort{32, 8};
constexpr Setting kLong{64, 48};

INSTANTIATE_TEST_SUITE_P(Fixtures, VulkanScratch,
                         ::testing::Values(ScratchCase{"tiny-llama-f16.gguf", hearth::testing::kF16Cosine, kShort},
                                           ScratchCase{"tiny-llama-f16.gguf", hearth::testing::kF16Cosine, kLong},
                                           ScratchCase{"tiny-llama-q8_0.gguf", hearth::testing::kQuantCosine, kShort},
                                           ScratchCase{"tiny-llama-q8_0.gguf", hearth::testing::kQuantCosine, kLong},
                                           ScratchCase{"tiny-qwen2-f16.gguf", hearth::testing::kF16Cosine, kShort},
                                           ScratchCase{"tiny-qwen2-f16.gguf", hearth::testing::kF16Cosine, kLong},
                                           ScratchCase{"tiny-qwen2-q8_0.gguf", hearth::testing::kQuantCosine, kShort},
                                           ScratchCase{"tiny-qwen2-q8_0.gguf", hearth::testing::kQuantCosine, kLong}),
                         case_name);

// runtime::Session::create reserves on Vulkan: the arena is there before the
// prompt and a generation does not grow it.
TEST(VulkanScratchSession, SessionReservesTheEstimateBeforeTheFirstToken) {
  auto be = make_vulkan();
  ASSERT_TRUE(be);
  auto m = load("tiny-qwen2-f16.gguf");
  ASSERT_TRUE(m);
  const runtime::SessionConfig config{64, DType::F16, 16};
  auto sizes = kv::scratch_sizes(m->memory_dims(), config.n_ctx, config.n_batch);
  ASSERT_TRUE(sizes.ok());
  auto session = runtime::Session::create(*m, *be, config);
  ASSERT_TRUE(session.ok()) << session.error().message;
  EXPECT_EQ(be->memory_use().scratch_bytes, sizes->activation_bytes);
  const auto ids = read_ids(data_path("models/tokens.txt"));
  ASSERT_TRUE((*session)->prefill(std::span(ids).first(40)).ok());  // batches of 16, 16 and 8
  for (int i = 0; i < kDecodeSteps; ++i) ASSERT_TRUE((*session)->decode(ids[static_cast<size_t>(40 + i)]).ok());
  const backend::MemoryUse use = be->memory_use();
  EXPECT_EQ(use.scratch_bytes, sizes->activation_bytes);
  EXPECT_EQ(use.scratch_high_water_bytes, sizes->activation_bytes);
  EXPECT_EQ(use.scratch_growths, 0u);
}

// A graph that needs more than was reserved still runs; the arena grows to
// what its plan needs and the growth is counted, not hidden.
TEST(VulkanScratchGrowth, AGraphLargerThanTheReservationGrowsAndIsCounted) {
  auto be = make_vulkan();
  ASSERT_TRUE(be);
  auto m = load("tiny-llama-f16.gguf");
  ASSERT_TRUE(m);
  auto sizes = kv::scratch_sizes(m->memory_dims(), 64, 32);
  ASSERT_TRUE(sizes.ok());
  const uint64_t reserved = sizes->activation_bytes / 2;
  ASSERT_TRUE(be->reserve_scratch({reserved, 0}).ok());
  EXPECT_EQ(be->memory_use().scratch_bytes, reserved);
  auto cache = kv::KvCache::create(*be, m->kv_config(64, DType::F16));
  ASSERT_TRUE(cache.ok());
  const auto ids = read_ids(data_path("models/tokens.txt"));
  std::vector<int32_t> pos(32);
  std::iota(pos.begin(), pos.end(), 0);
  backend::Graph graph;
  m->build_forward(graph, model::Batch{std::span(ids).first(32), pos}, **cache, model::LogitsRows::Last);
  const uint64_t needed = backend::plan_activations(graph).arena_bytes;
  ASSERT_GT(needed, reserved);
  std::vector<float> logits;
  ASSERT_TRUE(m->forward(*be, **cache, model::Batch{std::span(ids).first(32), pos}, model::LogitsRows::Last, logits).ok());
  const backend::MemoryUse use = be->memory_use();
  EXPECT_EQ(use.scratch_growths, 1u);
  EXPECT_EQ(use.scratch_bytes, needed);
  EXPECT_EQ(use.scratch_high_water_bytes, needed);
}

// A reservation no device can give fails before any token, as OutOfMemory
// naming the device and the bytes; the backend stays usable.
TEST(VulkanScratchLimits, AReservationLargerThanTheDeviceIsOutOfMemoryNamingTheBytes) {
  auto be = make_vulkan();
  ASSERT_TRUE(be);
  constexpr uint64_t kHuge = uint64_t{1} << 60;
  const auto st = be->reserve_scratch({kHuge, 0});
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, ErrorCode::OutOfMemory);
  EXPECT_NE(st.error().message.find(std::to_string(kHuge)), std::string::npos) << st.error().message;
  EXPECT_NE(st.error().message.find(be->device().name), std::string::npos) << st.error().message;
  EXPECT_EQ(be->memory_use().scratch_bytes, 0u);

  auto m = load("tiny-llama-f16.gguf");
  ASSERT_TRUE(m);
  auto sizes = kv::scratch_sizes(m->memory_dims(), 32, 8);
  ASSERT_TRUE(sizes.ok());
  ASSERT_TRUE(be->reserve_scratch({sizes->activation_bytes, sizes->matmul_bytes()}).ok());
  auto cache = kv::KvCache::create(*be, m->kv_config(32, DType::F16));
  ASSERT_TRUE(cache.ok());
  const auto ids = read_ids(data_path("models/tokens.txt"));
  const auto got = prefill_and_decode(*m, *be, **cache, ids, 8);
  const size_t n_vocab = static_cast<size_t>(m->hparams().n_vocab);
  const auto ref = reference_rows("tiny-llama-f16.gguf", n_vocab, 8);
  ASSERT_EQ(got.size(), ref.size());
  EXPECT_GE(compare_logits(got, ref, n_vocab).min_cosine, hearth::testing::kF16Cosine);
  EXPECT_EQ(be->memory_use().scratch_growths, 0u);
}

// Partial offload: the GPU side reserves the activation arena, the CPU side
// the whole reservation; neither grows over a prefill and decode steps, and
// the split reports both.
TEST(VulkanScratchSplit, BothSidesReserveAndNeitherGrows) {
  auto vk = make_vulkan();
  ASSERT_TRUE(vk);
  VulkanBackend* gpu = vk.get();
  backend::SplitBackend split(std::move(vk), backend::make_cpu_backend({2}), backend::SplitPlacement{1});
  auto m = load("tiny-llama-f16.gguf");
  ASSERT_TRUE(m);
  ASSERT_EQ(m->hparams().n_layer, 2);
  constexpr Setting kSplit{64, 24};
  auto sizes = kv::scratch_sizes(m->memory_dims(), kSplit.n_ctx, kSplit.n_batch);
  ASSERT_TRUE(sizes.ok());
  ASSERT_TRUE(split.reserve_scratch({sizes->activation_bytes, sizes->matmul_bytes()}).ok());
  EXPECT_EQ(split.front().memory_use().scratch_bytes, sizes->activation_bytes);
  EXPECT_EQ(split.back().memory_use().scratch_bytes, sizes->total());

  auto cache = kv::KvCache::create(split, m->kv_config(kSplit.n_ctx, DType::F16));
  ASSERT_TRUE(cache.ok()) << cache.error().message;
  const auto ids = read_ids(data_path("models/tokens.txt"));
  const auto got = prefill_and_decode(*m, split, **cache, ids, kSplit.n_batch);
  EXPECT_EQ(split.last_segments(), 3);  // CPU embedding, GPU layer 0, CPU layer 1 and head
  const size_t n_vocab = static_cast<size_t>(m->hparams().n_vocab);
  const auto ref = reference_rows("tiny-llama-f16.gguf", n_vocab, kSplit.n_batch);
  ASSERT_EQ(got.size(), ref.size());
  EXPECT_GE(compare_logits(got, ref, n_vocab).min_cosine, hearth::testing::kF16Cosine);

  const backend::MemoryUse front = split.front().memory_use();
  const backend::MemoryUse back = split.back().memory_use();
  EXPECT_EQ(front.scratch_growths, 0u);
  EXPECT_EQ(back.scratch_growths, 0u);
  EXPECT_EQ(front.scratch_bytes, sizes->activation_bytes);
  EXPECT_EQ(gpu->stats().activation_bytes, sizes->activation_bytes);
  EXPECT_EQ(back.scratch_bytes, sizes->total());
  const backend::MemoryUse both = split.memory_use();
  EXPECT_EQ(both.scratch_bytes, front.scratch_bytes + back.scratch_bytes);
  EXPECT_EQ(both.scratch_growths, 0u);
}

}  // namespace
}  // namespace hearth::vulkan
