// Sliding-window layers as rings on Vulkan and on a Vulkan+CPU split: a tiny
// Gemma 2 (window 40 on the even layers, tests/engine/runtime/windowed_model.h)
// allocates the windowed KV size, and its logits over many windows (batched
// prefill, then token by token, then a rewind the rings cannot serve) match
// the CPU backend's within the F16 fixture tolerance.
#include <gtest/gtest.h>
#include <hearth/engine/backend/cpu_backend.h>
#include <hearth/engine/backend/split_backend.h>
#include <hearth/engine/backend/vulkan/vulkan_backend.h>
#include <hearth/engine/kv/memory_estimate.h>
#include <hearth/engine/kv/sizing.h>
#include <hearth/engine/model/model.h>
#include <hearth/engine/runtime/session.h>

#include "../../model/fixture_logits.h"
#include "../../runtime/windowed_model.h"
#include "vulkan_test_env.h"

namespace hearth::vulkan {
namespace {

using hearth::testing::compare_logits;
using runtime::Session;
using runtime::SessionConfig;

constexpr int64_t kCtx = 256;
constexpr int32_t kBatch = 16;
constexpr int64_t kPrefill = 100;  // more than a ring (96 positions) holds
constexpr int64_t kDecode = 60;
constexpr int64_t kRewindTo = 40;  // the rings no longer hold its window
constexpr int64_t kAfterRewind = 8;

// Token ids both backends are fed, independent of what either predicts.
int32_t token_at(int64_t i) { return static_cast<int32_t>(3 + (i * 37 + i / 7) % 60); }

class VulkanRings : public ::testing::Test {
 protected:
  void SetUp() override {
    // A window wider than a block: a decode step then reads keys of three
    // logical blocks, so a table entry that maps one of them wrongly (say,
    // onto the block being written) changes the logits.
    spec_.window = 40;
    file_ = runtime::testing::write_windowed_model(spec_, "vulkan-rings");
    path_ = file_.path();
    auto m = model::Model::load(path_);
    ASSERT_TRUE(m.ok()) << m.error().message;
    model_ = std::move(*m);
  }

  // KV bytes counted by hand: a batch and the window behind its first token
  // span window + batch - 1 positions, which touch at most
  // ceil((span + block - 1) / block) blocks (when the span starts at a
  // block's last slot); even layers hold that many blocks, odd layers the
  // whole context. K and V: n_head_kv rows of head_dim F16 per position.
  uint64_t ring_layer_bytes() const {
    const int64_t span = spec_.window + kBatch - 1;
    const int64_t blocks = (span + kv::kBlockTokens - 1 + kv::kBlockTokens - 1) / kv::kBlockTokens;
    return 2ull * static_cast<uint64_t>(blocks * kv::kBlockTokens * spec_.n_head_kv * (spec_.n_embd / spec_.n_head)) * 2;
  }
  uint64_t full_layer_bytes() const {
    return 2ull * static_cast<uint64_t>(kCtx * spec_.n_head_kv * (spec_.n_embd / spec_.n_head)) * 2;
  }

  // Runs the same feed through `backend` and the CPU backend: a batched
  // prefill, token-by-token decode, then a rewind past the window and more
  // decode. Every step's logits are compared; both sessions re-prefill.
  void expect_matches_cpu(backend::Backend& backend) {
    const SessionConfig config{kCtx, DType::F16, kBatch};
    auto gpu = Session::create(*model_, backend, config);
    ASSERT_TRUE(gpu.ok()) << gpu.error().message;
    auto cpu_backend = backend::make_cpu_backend({1});
    auto cpu = Session::create(*model_, *cpu_backend, config);
    ASSERT_TRUE(cpu.ok()) << cpu.error().message;
    ASSERT_TRUE((*gpu)->cache().has_rings());
    ASSERT_TRUE((*cpu)->cache().has_rings());

    std::vector<float> got, ref;
    auto take = [&] {
      got.insert(got.end(), (*gpu)->last_logits().begin(), (*gpu)->last_logits().end());
      ref.insert(ref.end(), (*cpu)->last_logits().begin(), (*cpu)->last_logits().end());
    };
    std::vector<int32_t> prompt(kPrefill);
    for (int64_t i = 0; i < kPrefill; ++i) prompt[static_cast<size_t>(i)] = token_at(i);
    auto st = (*gpu)->prefill(prompt);
    ASSERT_TRUE(st.ok()) << st.error().message;
    ASSERT_TRUE((*cpu)->prefill(prompt).ok());
    take();
    for (int64_t i = kPrefill; i < kPrefill + kDecode; ++i) {
      st = (*gpu)->decode(token_at(i));
      ASSERT_TRUE(st.ok()) << "position " << i << ": " << st.error().message;
      ASSERT_TRUE((*cpu)->decode(token_at(i)).ok());
      take();
    }
    // Position kRewindTo needs keys the rings overwrote: prefilled again.
    ASSERT_TRUE((*gpu)->truncate(kRewindTo).ok());
    ASSERT_TRUE((*cpu)->truncate(kRewindTo).ok());
    EXPECT_EQ((*gpu)->reprefills(), 1);
    EXPECT_EQ((*cpu)->reprefills(), 1);
    for (int64_t i = kRewindTo; i < kRewindTo + kAfterRewind; ++i) {
      const int32_t t = token_at(1000 + i);  // not what was there before the rewind
      ASSERT_TRUE((*gpu)->decode(t).ok()) << "position " << i;
      ASSERT_TRUE((*cpu)->decode(t).ok());
      take();
    }
    const size_t n_vocab = static_cast<size_t>(model_->hparams().n_vocab);
    ASSERT_EQ(got.size(), ref.size());
    ASSERT_EQ(ref.size(), n_vocab * (1 + kDecode + kAfterRewind));
    const auto a = compare_logits(got, ref, n_vocab);
    EXPECT_GE(a.min_cosine, hearth::testing::kF16Cosine);
    EXPECT_GE(a.top1, 0.95);
  }

  runtime::testing::WindowedModelSpec spec_{};
  runtime::testing::WindowedModelFile file_;
  std::string path_;
  std::unique_ptr<model::Model> model_;
};

TEST_F(VulkanRings, AllocatesTheWindowedEstimate) {
  auto vk = VulkanBackend::create(testing::test_config());
  ASSERT_TRUE(vk.ok()) << vk.error().message;
  auto s = Session::create(*model_, **vk, SessionConfig{kCtx, DType::F16, kBatch});
  ASSERT_TRUE(s.ok()) << s.error().message;
  ASSERT_EQ(spec_.n_layer % 2, 0);
  const uint64_t by_hand = static_cast<uint64_t>(spec_.n_layer / 2) * (ring_layer_bytes() + full_layer_bytes());
  auto estimate = kv::estimate_memory(model_->memory_dims(), 0, kCtx, DType::F16, kBatch, kv::WindowedLayers::Ring);
  ASSERT_TRUE(estimate.ok()) << estimate.error().message;
  EXPECT_EQ(estimate->kv_bytes, by_hand);
  EXPECT_EQ((*vk)->memory_use().kv_bytes, estimate->kv_bytes);
  EXPECT_EQ((*s)->cache().bytes(), estimate->kv_bytes);
  EXPECT_LT((*vk)->memory_use().kv_bytes, static_cast<uint64_t>(spec_.n_layer) * full_layer_bytes());
  EXPECT_EQ((*s)->cache().layer_capacity(0) * 2 * spec_.n_head_kv * (spec_.n_embd / spec_.n_head) * 2,
            static_cast<int64_t>(ring_layer_bytes()));
}

TEST_F(VulkanRings, LogitsMatchTheCpuThroughDecodeAndRewind) {
  auto vk = VulkanBackend::create(testing::test_config());
  ASSERT_TRUE(vk.ok()) << vk.error().message;
  expect_matches_cpu(**vk);
  // Decode steps keep one graph shape: the ring's tables did not force a
  // new recording every token.
  EXPECT_GT((*vk)->stats().reuses, static_cast<uint32_t>(kDecode / 2));
}

// One layer (a windowed one) on the GPU, the rest on the CPU.
TEST_F(VulkanRings, SplitWithOneGpuLayerMatchesTheCpu) {
  auto vk = VulkanBackend::create(testing::test_config());
  ASSERT_TRUE(vk.ok()) << vk.error().message;
  VulkanBackend* gpu = vk->get();
  backend::SplitBackend split(std::move(vk).value(), backend::make_cpu_backend({1}), backend::SplitPlacement{1});
  {
    auto s = Session::create(*model_, split, SessionConfig{kCtx, DType::F16, kBatch});
    ASSERT_TRUE(s.ok()) << s.error().message;
    // Layer 0 (windowed) is a ring in GPU memory; the rest are on the CPU.
    EXPECT_EQ(gpu->memory_use().kv_bytes, ring_layer_bytes());
    EXPECT_NE((*s)->cache().layer_view(0).buffer, (*s)->cache().layer_view(1).buffer);
    auto estimate = kv::estimate_memory(model_->memory_dims(), 0, kCtx, DType::F16, kBatch, kv::WindowedLayers::Ring);
    ASSERT_TRUE(estimate.ok()) << estimate.error().message;
    EXPECT_EQ(split.memory_use().kv_bytes, estimate->kv_bytes);
  }
  expect_matches_cpu(split);
}

}  // namespace
}  // namespace hearth::vulkan
