// Speculative decoding with the target on Vulkan (lavapipe in CI): greedy
// output equals plain greedy decoding on the same device for the story model
// (200 tokens) and each fixture family (64 tokens), with n-gram drafts and a
// draft model on the CPU, at several draft lengths, up to rounding near-ties
// (below).
#include <gtest/gtest.h>
#include <hearth/engine/backend/cpu_backend.h>
#include <hearth/engine/backend/vulkan/vulkan_backend.h>

#include "../../model/fixture_logits.h"
#include "../../runtime/speculative_check.h"
#include "vulkan_test_env.h"

namespace hearth::vulkan {
namespace {

using hearth::testing::data_path;
using hearth::testing::read_ids;

std::unique_ptr<model::Model> load(const std::string& file) {
  auto m = model::Model::load(data_path("models/" + file));
  EXPECT_TRUE(m.ok()) << file << ": " << (m.ok() ? "" : m.error().message);
  return m.ok() ? std::move(*m) : nullptr;
}

struct Pair {
  const char* target;
  const char* draft;
  int32_t tokens;
};

constexpr Pair kPairs[] = {
    {"stories260K.gguf", nullptr, 200},
    {"tiny-llama-f32.gguf", "tiny-llama-q4_0.gguf", 64},
    {"tiny-llama-q4_k_m.gguf", "tiny-llama-q8_0.gguf", 64},
    {"tiny-llama-q8_0.gguf", "tiny-llama-q4_0.gguf", 64},
    {"tiny-qwen2-q4_k_m.gguf", "tiny-qwen2-q8_0.gguf", 64},
    {"tiny-gemma3-f32.gguf", "tiny-gemma3-q4_k_m.gguf", 64},
    {"tiny-smollm3-q8_0.gguf", "tiny-smollm3-q4_k_m.gguf", 64},
    {"tiny-llama31-f32.gguf", "tiny-llama31-q4_k_m.gguf", 64},
    {"tiny-qwen3moe-q8_0.gguf", "tiny-qwen3moe-q4_k_m.gguf", 64},
    {"tiny-gpt-oss-mxfp4_moe.gguf", "tiny-gpt-oss-q8_0.gguf", 64},
};

// Vulkan's verify pass runs the batched matmul shaders, which round
// differently from the single-token matvec: a greedy choice between two
// logits closer than this (relative to the largest) may flip, and the runs
// part there (tiny-gemma3-f32 has one at 7e-6 of 3.18). The CPU kernels are
// bit-identical across batch sizes and get no such allowance.
constexpr double kNearTie = 1e-5;

class VulkanSpeculation : public ::testing::TestWithParam<Pair> {};

TEST_P(VulkanSpeculation, GreedyWithSpeculationIsPlainGreedy) {
  const Pair& p = GetParam();
  auto target = load(p.target);
  auto draft = p.draft ? load(p.draft) : nullptr;
  ASSERT_TRUE(target && (draft || !p.draft));
  auto vk = VulkanBackend::create(testing::test_config());
  ASSERT_TRUE(vk.ok()) << vk.error().message;
  auto cpu = backend::make_cpu_backend({1});
  const auto prompt = read_ids(data_path(p.draft ? "models/tokens.txt" : "models/stories260K.prompt-tokens.txt"));
  const auto f = runtime::testing::expect_speculation_exact(*target, **vk, draft.get(), cpu.get(), prompt, p.tokens,
                                                            {2, 5}, kNearTie);
  EXPECT_GT(f.verify_passes, 0);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, VulkanSpeculation, ::testing::ValuesIn(kPairs),
                         [](const ::testing::TestParamInfo<Pair>& pi) {
                           return hearth::testing::fixture_case_name({pi.param.target, "", 0, 0});
                         });

}  // namespace
}  // namespace hearth::vulkan
