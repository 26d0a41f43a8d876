// Sentence embeddings on the Vulkan backend (lavapipe in CI): the encoder's
// LayerNorm and GELU shaders, bidirectional attention through the key
// limits, several texts in one pass (each token through its text's block
// table), against the reference engine's vectors
// with the same tolerances as the CPU.
#include <gtest/gtest.h>
#include <hearth/engine/backend/vulkan/vulkan_backend.h>
#include <hearth/engine/runtime/embedder.h>

#include "../../runtime/embed_fixture.h"
#include "vulkan_test_env.h"

namespace hearth::vulkan {
namespace {

using hearth::testing::EmbedCase;

class VulkanEmbeddings : public ::testing::TestWithParam<EmbedCase> {};

TEST_P(VulkanEmbeddings, MatchTheReference) {
  auto be = VulkanBackend::create(testing::test_config());
  ASSERT_TRUE(be.ok()) << be.error().message;
  EXPECT_TRUE((*be)->supports_sequence_batches());
  auto e = runtime::Embedder::load(hearth::testing::embed_path(GetParam().model), **be);
  ASSERT_TRUE(e.ok()) << e.error().message;
  const auto texts = hearth::testing::read_embed_texts();
  auto got = (*e)->embed(texts);
  ASSERT_TRUE(got.ok()) << got.error().message;
  ASSERT_EQ(got->vectors.size(), texts.size());
  hearth::testing::expect_matches_reference(GetParam(), *got, 0, "vulkan");
  EXPECT_GT((*be)->stats().weight_bytes, 0u);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, VulkanEmbeddings, ::testing::ValuesIn(hearth::testing::kEmbedCases),
                         [](const auto& p) {
                           std::string n = p.param.model;
                           for (char& c : n) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return n;
                         });

}  // namespace
}  // namespace hearth::vulkan
