// RoPE with YaRN and Llama 3.1 frequency factors on Vulkan against the CPU
// backend's rope op (the reference implementation) on random data: the same
// one-node graph runs on both backends.
#include <gtest/gtest.h>
#include <hearth/engine/backend/cpu_backend.h>
#include <hearth/engine/backend/vulkan/vulkan_backend.h>

#include <cmath>
#include <random>
#include <vector>

#include "vulkan_test_env.h"

namespace hearth::vulkan {
namespace {

using backend::RopeMode;
using backend::RopeParams;

struct RopeCase {
  const char* name;
  RopeMode mode;
  int32_t n_dims;
  float ext_factor;
  float freq_scale;
  float attn_factor;
  bool freq_factors;
};

// Runs rope(x, positions) as a one-node graph on `be`; returns the output.
std::vector<float> run_rope(backend::Backend& be, std::vector<float> x, std::vector<int32_t> pos,
                            const RopeParams& p, int64_t width) {
  backend::Graph g;
  backend::Tensor* tx = g.input(DType::F32, {width, static_cast<int64_t>(pos.size()), 1, 1}, x.data());
  backend::Tensor* tp = g.input(DType::I32, {static_cast<int64_t>(pos.size()), 1, 1, 1}, pos.data());
  g.output = g.rope(tx, tp, p);
  const auto st = be.compute(g);
  EXPECT_TRUE(st.ok()) << st.error().message;
  if (!st.ok()) return {};
  return std::vector<float>(g.output->as<const float>(), g.output->as<const float>() + g.output->elements());
}

TEST(VulkanRopeScaling, MatchesCpuReference) {
  auto vk = VulkanBackend::create(testing::test_config());
  ASSERT_TRUE(vk.ok()) << vk.error().message;
  auto cpu = backend::make_cpu_backend({1});
  const RopeCase cases[] = {
      {"yarn normal", RopeMode::Normal, 64, 1.0f, 0.25f, 1.0f, false},
      {"yarn neox", RopeMode::NeoX, 64, 1.0f, 0.125f, 1.0f, false},
      {"yarn partial mix, attn factor", RopeMode::NeoX, 32, 0.5f, 0.25f, 0.75f, false},
      {"freq factors normal", RopeMode::Normal, 64, 0.0f, 1.0f, 1.0f, true},
      {"freq factors neox partial", RopeMode::NeoX, 48, 0.0f, 1.0f, 1.0f, true},
      {"yarn and freq factors", RopeMode::Normal, 64, 1.0f, 0.25f, 1.0f, true},
      // The K-shift's parameters: YaRN with attn_factor cancelling mscale.
      {"k-shift yarn", RopeMode::NeoX, 64, 1.0f, 0.25f, 1.0f / (1.0f + 0.1f * std::log(4.0f)), false},
  };
  std::mt19937 rng(99);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f), ff_dist(1.0f, 8.0f);
  const int32_t head_dim = 64, n_heads = 3;
  const std::vector<int32_t> pos = {0, 1, 5, 31, 100, 257, 300};
  for (const RopeCase& c : cases) {
    std::vector<float> factors(static_cast<size_t>(c.n_dims / 2));
    for (auto& f : factors) f = ff_dist(rng);
    RopeParams p;
    p.mode = c.mode;
    p.n_dims = c.n_dims;
    p.head_dim = head_dim;
    p.freq_base = 500000.0f;
    p.freq_scale = c.freq_scale;
    p.ext_factor = c.ext_factor;
    p.attn_factor = c.attn_factor;
    p.beta_fast = 32.0f;
    p.beta_slow = 1.0f;
    p.n_ctx_orig = 4096;
    p.freq_factors = c.freq_factors ? factors.data() : nullptr;
    std::vector<float> x(static_cast<size_t>(head_dim * n_heads) * pos.size());
    for (auto& v : x) v = dist(rng);
    const auto want = run_rope(*cpu, x, pos, p, head_dim * n_heads);
    const auto got = run_rope(**vk, x, pos, p, head_dim * n_heads);
    ASSERT_EQ(got.size(), want.size()) << c.name;
    for (size_t i = 0; i < got.size(); ++i) {
      // Angles up to ~300 rad: float sin/cos of large arguments lose ~1e-4.
      ASSERT_NEAR(got[i], want[i], 2e-4f + 1e-3f * std::fabs(want[i])) << c.name << " at " << i;
    }
    // The output differs from the input where rotated (a test that can fail).
    EXPECT_NE(got[static_cast<size_t>(head_dim * n_heads) * 3 + 1], x[static_cast<size_t>(head_dim * n_heads) * 3 + 1]);
  }
}

}  // namespace
}  // namespace hearth::vulkan
