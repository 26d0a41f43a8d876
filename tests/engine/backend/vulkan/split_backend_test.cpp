// Partial offload: the split backend runs the first N layers on Vulkan
// (lavapipe in CI) and the rest on the CPU. Every fixture model's logits with
// one layer on the GPU against the reference engine's (tolerances from
// tests/data/FIXTURES-README.md), the 0-layer and all-layer edges, stories260K
// greedy against the reference ids and text, which weights reach the GPU, and
// that unloading a split model gives the device memory back.
#include <gtest/gtest.h>
#include <hearth/engine/backend/cpu_backend.h>
#include <hearth/engine/backend/split_backend.h>
#include <hearth/engine/backend/vulkan/vulkan_backend.h>
#include <hearth/engine/model/model.h>
#include <hearth/engine/runtime/backend_choice.h>
#include <hearth/engine/runtime/session.h>

#include <fstream>
#include <numeric>
#include <sstream>

#include "../../model/fixture_logits.h"
#include "vulkan_test_env.h"

namespace hearth::vulkan {
namespace {

using backend::SplitBackend;
using backend::SplitPlacement;
using hearth::testing::compare_logits;
using hearth::testing::data_path;
using hearth::testing::read_f32;
using hearth::testing::read_ids;

using Case = hearth::testing::FixtureCase;

struct Split {
  std::unique_ptr<SplitBackend> backend;
  VulkanBackend* gpu = nullptr;  // owned by `backend`
};

Split make_split(int64_t gpu_layers) {
  auto vk = VulkanBackend::create(testing::test_config());
  EXPECT_TRUE(vk.ok()) << vk.error().message;
  if (!vk.ok()) return {};
  Split s;
  s.gpu = vk->get();
  s.backend = std::make_unique<SplitBackend>(std::move(vk).value(), backend::make_cpu_backend({2}),
                                             SplitPlacement{gpu_layers});
  return s;
}

// Bytes of the file's tensors whose names start with `prefix` ("blk.0.").
uint64_t tensor_bytes(const model::Model& m, const std::string& prefix) {
  uint64_t total = 0;
  for (const auto& t : m.file().tensors()) {
    if (t.name.rfind(prefix, 0) == 0) total += m.file().tensor_data(t).size();
  }
  return total;
}

enum class Feed { OneBatch, TokenByToken };

// Runs the case's tokens through `split` with its first `gpu_layers` layers on
// the GPU and checks the logits against the reference, where the KV cache
// lives, and which weights were uploaded.
void run_case(const Case& c, Split& split, Feed feed, int64_t gpu_layers) {
  auto model = model::Model::load(data_path(std::string("models/") + c.model));
  ASSERT_TRUE(model.ok()) << model.error().message;
  const int64_t n_layer = (*model)->hparams().n_layer;
  ASSERT_GE(n_layer, 2) << "a split needs at least two layers";
  const auto ids = read_ids(data_path(std::string("models/") + c.tokens));
  auto cache = kv::KvCache::create(*split.backend, (*model)->kv_config(static_cast<int64_t>(ids.size()), DType::F16));
  ASSERT_TRUE(cache.ok()) << cache.error().message;
  // Each layer's K/V live where the layer runs: one buffer for the GPU
  // layers, another for the CPU layers (the Vulkan kernels reject a KV
  // buffer that is not the GPU's, so the logits check the owner too).
  const backend::Buffer* first = (*cache)->layer_view(0).buffer;
  for (int64_t l = 0; l < n_layer; ++l) {
    const bool same_as_first = (*cache)->layer_view(l).buffer == first;
    EXPECT_EQ(same_as_first, l < gpu_layers || gpu_layers == 0) << "layer " << l;
  }
  std::vector<int32_t> pos(ids.size());
  std::iota(pos.begin(), pos.end(), 0);
  std::vector<float> all, logits;
  if (feed == Feed::OneBatch) {
    auto st = (*model)->forward(*split.backend, **cache, model::Batch{ids, pos}, model::LogitsRows::All, all);
    ASSERT_TRUE(st.ok()) << st.error().message;
  } else {
    for (size_t i = 0; i < ids.size(); ++i) {
      auto st = (*model)->forward(*split.backend, **cache,
                                  model::Batch{std::span(ids).subspan(i, 1), std::span(pos).subspan(i, 1)},
                                  model::LogitsRows::Last, logits);
      ASSERT_TRUE(st.ok()) << st.error().message;
      all.insert(all.end(), logits.begin(), logits.end());
    }
    if (gpu_layers > 0) {
      // The GPU part keeps one shape every step: recorded once, resubmitted after.
      EXPECT_EQ(split.gpu->stats().recordings, 1u);
      EXPECT_EQ(split.gpu->stats().reuses, ids.size() - 1);
    }
  }
  const auto ref = read_f32(data_path(std::string("models/") + c.model + ".logits.f32"));
  ASSERT_EQ(all.size(), ref.size());
  const auto a = compare_logits(all, ref, ref.size() / ids.size());
  hearth::testing::print_agreement(feed == Feed::OneBatch ? "split" : "split-dec", c.model, a);
  EXPECT_GE(hearth::testing::checked_cosine(a, c), c.min_cosine) << c.model;
  EXPECT_GE(a.top1, c.min_top1) << c.model;

  // CPU-layer weights never reach the GPU; GPU-layer weights all do.
  uint64_t expected = 0;
  for (int64_t l = 0; l < gpu_layers; ++l) expected += tensor_bytes(**model, "blk." + std::to_string(l) + ".");
  if (gpu_layers < n_layer) {
    EXPECT_EQ(split.backend->last_segments(), gpu_layers > 0 ? 3 : 1);  // CPU embedding, GPU layers, CPU rest
    EXPECT_EQ(split.gpu->stats().weight_bytes, expected);
  } else {
    EXPECT_EQ(split.backend->last_segments(), 1);
    EXPECT_GT(split.gpu->stats().weight_bytes, expected);  // the embedding and output too
  }
}

class SplitLogits : public ::testing::TestWithParam<Case> {};

TEST_P(SplitLogits, OneLayerOnGpuOneBatch) {
  auto split = make_split(1);
  ASSERT_TRUE(split.backend);
  run_case(GetParam(), split, Feed::OneBatch, 1);
}

TEST_P(SplitLogits, OneLayerOnGpuTokenByToken) {
  auto split = make_split(1);
  ASSERT_TRUE(split.backend);
  run_case(GetParam(), split, Feed::TokenByToken, 1);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, SplitLogits, ::testing::ValuesIn(hearth::testing::kFixtureCases),
                         [](const ::testing::TestParamInfo<Case>& param_info) {
                           return hearth::testing::fixture_case_name(param_info.param);
                         });
INSTANTIATE_TEST_SUITE_P(MoeFixtures, SplitLogits, ::testing::ValuesIn(hearth::testing::kMoeFixtureCases),
                         [](const ::testing::TestParamInfo<Case>& param_info) {
                           return hearth::testing::fixture_case_name(param_info.param);
                         });

const Case& stories_case() {
  for (const auto& c : hearth::testing::kFixtureCases) {
    if (std::string(c.model) == "stories260K.gguf") return c;
  }
  return hearth::testing::kFixtureCases[0];
}

TEST(SplitEdges, NoLayerOnGpuRunsEverythingOnTheCpu) {
  auto split = make_split(0);
  ASSERT_TRUE(split.backend);
  const uint64_t device_start = split.gpu->stats().device_bytes;
  run_case(hearth::testing::kFixtureCases[2], split, Feed::OneBatch, 0);
  EXPECT_EQ(split.gpu->stats().weight_bytes, 0u);
  EXPECT_EQ(split.gpu->stats().device_bytes, device_start);  // not even the KV cache
}

TEST(SplitEdges, AllLayersOnGpuRunsEverythingOnVulkan) {
  auto split = make_split(1000);
  ASSERT_TRUE(split.backend);
  run_case(stories_case(), split, Feed::TokenByToken, 5);
}

// SentencePiece pieces to text: U+2581 is a space, <0xNN> is a raw byte.
std::string piece_text(const std::string& piece) {
  if (piece.size() == 6 && piece.rfind("<0x", 0) == 0 && piece.back() == '>') {
    return std::string(1, static_cast<char>(std::stoi(piece.substr(3, 2), nullptr, 16)));
  }
  std::string out;
  for (size_t i = 0; i < piece.size(); ++i) {
    if (piece.compare(i, 3, "\xE2\x96\x81") == 0) {
      out += ' ';
      i += 2;
    } else {
      out += piece[i];
    }
  }
  return out;
}

TEST(SplitGreedy, StoriesMatchesTheReferenceIdsAndText) {
  auto split = make_split(2);  // 2 of stories260K's 5 layers on the GPU
  ASSERT_TRUE(split.backend);
  auto m = model::Model::load(data_path("models/stories260K.gguf"));
  ASSERT_TRUE(m.ok()) << m.error().message;
  auto pieces = (*m)->file().get_string_array("tokenizer.ggml.tokens");
  ASSERT_TRUE(pieces.ok());
  const auto prompt = read_ids(data_path("models/stories260K.prompt-tokens.txt"));
  const auto ref = read_ids(data_path("models/stories260K.gguf.greedy.txt"));
  ASSERT_GE(ref.size(), 50u);
  auto session = runtime::Session::create(**m, *split.backend, runtime::SessionConfig{256, DType::F16, 3});
  ASSERT_TRUE(session.ok()) << session.error().message;
  runtime::GenerateOptions opt;
  opt.max_tokens = 50;
  opt.sampler.temperature = 0;
  auto detok = [&](int32_t t) { return piece_text((*pieces)[static_cast<size_t>(t)]); };
  auto r = (*session)->generate(prompt, opt, detok, nullptr);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->tokens.size(), 50u);
  EXPECT_EQ(r->tokens, std::vector<int32_t>(ref.begin(), ref.begin() + 50));
  EXPECT_EQ(split.backend->last_segments(), 3);

  std::string text;
  for (size_t i = 1; i < prompt.size(); ++i) text += detok(prompt[i]);
  text += r->text;
  if (!text.empty() && text[0] == ' ') text.erase(0, 1);  // SentencePiece's leading space
  std::ifstream in(data_path("models/stories260K.greedy-text.txt"));
  std::stringstream expected;
  expected << in.rdbuf();
  // 50 tokens cover the reference text's beginning; compare what they cover.
  const size_t n = std::min(text.size(), expected.str().size());
  ASSERT_GT(n, 40u);
  EXPECT_EQ(text.substr(0, n), expected.str().substr(0, n));
}

// Loads a split model, runs a prefill and a decode step, unloads it.
void load_run_unload(Split& split) {
  {
    auto model = model::Model::load(data_path("models/stories260K.gguf"));
    ASSERT_TRUE(model.ok()) << model.error().message;
    auto cache = kv::KvCache::create(*split.backend, (*model)->kv_config(64, DType::F16));
    ASSERT_TRUE(cache.ok()) << cache.error().message;
    std::vector<int32_t> ids{1, 403, 407}, pos{0, 1, 2};
    std::vector<float> logits;
    auto st = (*model)->forward(*split.backend, **cache, model::Batch{ids, pos}, model::LogitsRows::Last, logits);
    ASSERT_TRUE(st.ok()) << st.error().message;
    std::vector<int32_t> one{261}, at{3};
    st = (*model)->forward(*split.backend, **cache, model::Batch{one, at}, model::LogitsRows::Last, logits);
    ASSERT_TRUE(st.ok()) << st.error().message;
    EXPECT_GT(split.gpu->stats().weight_bytes, 0u);
  }
  split.gpu->release_weights();  // the unload: weights go, the KV cache went with its owner
}

TEST(SplitUnload, DeviceMemoryReturnsToWhereItWas) {
  auto split = make_split(2);
  ASSERT_TRUE(split.backend);
  // A first load sizes the backend's reusable scratch (activations, inputs,
  // output); after that, a load and unload must leave the device exactly as
  // it found it.
  load_run_unload(split);
  const uint64_t before = split.gpu->stats().device_bytes;
  const uint64_t used_before = split.gpu->stats().used_bytes;
  {
    auto model = model::Model::load(data_path("models/stories260K.gguf"));
    ASSERT_TRUE(model.ok());
    auto cache = kv::KvCache::create(*split.backend, (*model)->kv_config(64, DType::F16));
    ASSERT_TRUE(cache.ok());
    EXPECT_GT(split.gpu->stats().used_bytes, used_before);  // the GPU layers' KV cache is on the device
  }
  load_run_unload(split);
  EXPECT_EQ(split.gpu->stats().weight_bytes, 0u);
  EXPECT_EQ(split.gpu->stats().used_bytes, used_before);
  EXPECT_EQ(split.gpu->stats().device_bytes, before);
}


// The CPU side holds exactly the KV of the layers it runs, by the one sizing
// formula (kv_cache_bytes for those layers), and the split adds up its sides.
TEST(SplitMemory, CpuSideHoldsTheKvOfItsLayers) {
  auto split = make_split(2);
  ASSERT_TRUE(split.backend);
  auto model = model::Model::load(data_path("models/stories260K.gguf"));
  ASSERT_TRUE(model.ok()) << model.error().message;
  const auto config = (*model)->kv_config(100, DType::F16);
  auto cache = kv::KvCache::create(*split.backend, config);
  ASSERT_TRUE(cache.ok()) << cache.error().message;
  auto cpu_layers = kv::kv_cache_bytes(config.n_layer - 2, config.n_head_kv, config.head_dim, 100, DType::F16);
  ASSERT_TRUE(cpu_layers.ok());
  EXPECT_EQ(split.backend->back().memory_use().kv_bytes, *cpu_layers);
  EXPECT_EQ(split.backend->memory_use().kv_bytes,
            split.backend->front().memory_use().kv_bytes + split.backend->back().memory_use().kv_bytes);
  EXPECT_STREQ(split.backend->name(), "vulkan+cpu");
}

// The backend choice with a model: the split is named in the description the
// app and hearth-cli show, and 0 / all layers give the plain backends.
TEST(SplitChoice, DescriptionSaysTheSplit) {
  runtime::BackendRequest request;
  request.preference = runtime::BackendPreference::Vulkan;  // lavapipe in CI
  runtime::ModelFootprint model;
  model.n_layer = 2;
  model.estimate.weights_bytes = 3000;
  model.estimate.kv_bytes = 200;
  model.estimate.scratch_bytes = 100;
  model.estimate.total_bytes = 3300;
  request.model = model;

  request.gpu_layers = {runtime::GpuLayersMode::Count, 1};
  auto split = runtime::choose_backend(request);
  ASSERT_TRUE(split.backend);
  EXPECT_STREQ(split.backend->name(), "vulkan+cpu");
  EXPECT_EQ(split.gpu_layers, 1);
  EXPECT_EQ(split.description.rfind("Vulkan: ", 0), 0u) << split.description;
  EXPECT_NE(split.description.find(": 1 of 2 layers on GPU, rest on CPU"), std::string::npos) << split.description;

  request.gpu_layers = {runtime::GpuLayersMode::Count, 0};
  auto cpu = runtime::choose_backend(request);
  EXPECT_STREQ(cpu.backend->name(), "cpu");
  EXPECT_EQ(cpu.description, "CPU: 0 of 2 layers on the GPU");

  request.gpu_layers = {runtime::GpuLayersMode::All, 0};
  auto all = runtime::choose_backend(request);
  EXPECT_STREQ(all.backend->name(), "vulkan");
  EXPECT_EQ(all.gpu_layers, 2);
}

// The picker's free VRAM comes from a device query that loads no model and
// agrees with what the backend itself reports.
TEST(SplitChoice, ProbeReportsTheDevicesFreeMemory) {
  runtime::BackendRequest request;
  request.preference = runtime::BackendPreference::Vulkan;
  const auto probe = runtime::probe_gpu(request);
  ASSERT_TRUE(probe.has_value());
  EXPECT_GT(probe->device.memory_free, 0u);
  EXPECT_LE(probe->device.memory_free, probe->device.memory_total);
  auto vk = VulkanBackend::create(testing::test_config());
  ASSERT_TRUE(vk.ok());
  EXPECT_EQ(probe->device.name, (*vk)->device().name);
  EXPECT_EQ(probe->device.memory_total, (*vk)->device().memory_total);
  EXPECT_EQ(probe->description, "Vulkan: " + (*vk)->device().name);
}

}  // namespace
}  // namespace hearth::vulkan
