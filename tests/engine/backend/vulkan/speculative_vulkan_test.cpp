// Speculative decoding with the target on Vulkan (lavapipe in CI). Greedy
// output equals plain greedy decoding on the same device token for token,
// for the story model (200 tokens) and each fixture family (64 tokens), with
// n-gram drafts and a draft model on the CPU, at draft lengths giving verify
// passes of 3, 5 and 8 tokens. The reason: every row of a verify pass holds
// bit for bit the logits of a one-token decode (the products of up to eight
// tokens take the matvec shader, one column per token), checked directly.
#include <gtest/gtest.h>
#include <hearth/engine/backend/cpu_backend.h>
#include <hearth/engine/backend/vulkan/vulkan_backend.h>

#include <cstring>

#include "../../model/fixture_logits.h"
#include "../../runtime/runtime_fixture.h"
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

std::string case_name(const char* target) { return hearth::testing::fixture_case_name({target, "", 0, 0}); }

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
                                                            {2, 4, 7});
  EXPECT_GT(f.verify_passes, 0);
  EXPECT_GT(f.accepted, 0);
  EXPECT_LT(f.accepted, f.drafted);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, VulkanSpeculation, ::testing::ValuesIn(kPairs),
                         [](const ::testing::TestParamInfo<Pair>& pi) { return case_name(pi.param.target); });

// Each row of a verify pass of 2 to 8 tokens (with rejected tails cut off in
// between, as speculation does) holds bit for bit the logits a one-token
// decode on the same device computes at that position, for every weight
// type of the fixtures and both Vulkan KV cache types.
class VulkanVerifyRows : public ::testing::TestWithParam<const char*> {};

TEST_P(VulkanVerifyRows, AreTheOneTokenLogitsBitForBit) {
  auto model = load(GetParam());
  ASSERT_TRUE(model);
  auto vk = VulkanBackend::create(testing::test_config());
  ASSERT_TRUE(vk.ok()) << vk.error().message;
  const bool story = std::string(GetParam()) == "stories260K.gguf";
  const auto prompt = read_ids(data_path(story ? "models/stories260K.prompt-tokens.txt" : "models/tokens.txt"));
  for (DType kv : {DType::F16, DType::Q8_0}) {
    auto verifying = runtime::Session::create(*model, **vk, runtime::SessionConfig{512, kv, 64});
    auto decoding = runtime::Session::create(*model, **vk, runtime::SessionConfig{512, kv, 64});
    if (kv == DType::Q8_0 && !verifying.ok() &&
        verifying.error().message.find("not a multiple of the Q8_0 block size") != std::string::npos) {
      continue;  // heads narrower than a Q8_0 block (the story model, tiny gemma3) keep an F16 cache only
    }
    ASSERT_TRUE(verifying.ok() && decoding.ok()) << (verifying.ok() ? "" : verifying.error().message);
    runtime::Session& s = **verifying;
    runtime::Session& r = **decoding;
    ASSERT_TRUE(s.prefill(prompt).ok());
    ASSERT_TRUE(r.prefill(prompt).ok());
    const auto n_vocab = static_cast<size_t>(s.n_vocab());
    const auto tokens = runtime::testing::synthetic_tokens(200, 11, static_cast<int32_t>(n_vocab));
    size_t next = 0;
    std::vector<float> rows;
    for (int step = 0; step < 14; ++step) {
      const size_t k = 1 + static_cast<size_t>(step % 7);  // 2 to 8 tokens per pass, each twice
      const std::vector<int32_t> batch(tokens.begin() + static_cast<std::ptrdiff_t>(next),
                                       tokens.begin() + static_cast<std::ptrdiff_t>(next + k + 1));
      const size_t base = s.context().size();
      ASSERT_TRUE(s.verify(batch, rows).ok());
      ASSERT_EQ(rows.size(), batch.size() * n_vocab);
      for (size_t i = 0; i < batch.size(); ++i) {
        ASSERT_TRUE(r.decode(batch[i]).ok());
        ASSERT_EQ(std::memcmp(rows.data() + i * n_vocab, r.last_logits().data(), n_vocab * sizeof(float)), 0)
            << "KV " << traits(kv).name << ", pass " << step << ", row " << i << " of " << batch.size();
      }
      const size_t keep = static_cast<size_t>(tokens[next + 1]) % (k + 1);  // drafts kept
      ASSERT_TRUE(s.truncate(base + 1 + keep).ok());
      ASSERT_TRUE(r.truncate(base + 1 + keep).ok());
      next += keep + 1;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, VulkanVerifyRows,
                         ::testing::Values("stories260K.gguf", "tiny-llama-f32.gguf", "tiny-llama-f16.gguf",
                                           "tiny-llama-q4_0.gguf", "tiny-llama-q8_0.gguf", "tiny-llama-q4_k_m.gguf",
                                           "tiny-llama-q6_k.gguf", "tiny-qwen2-f16.gguf", "tiny-qwen2-q4_k_m.gguf",
                                           "tiny-gemma3-f32.gguf", "tiny-gemma3-q4_k_m.gguf",
                                           "tiny-smollm3-q8_0.gguf", "tiny-llama31-f32.gguf",
                                           "tiny-qwen3moe-q8_0.gguf", "tiny-gpt-oss-f32.gguf",
                                           "tiny-gpt-oss-mxfp4_moe.gguf"),
                         [](const ::testing::TestParamInfo<const char*>& pi) { return case_name(pi.param); });

}  // namespace
}  // namespace hearth::vulkan
