// gpt-oss's metadata as the loader reads it, on the reference fixture
// (FIXTURES-README.md: window 16 on alternating layers with layer 0 windowed,
// YaRN factor 32 over 4096 positions, 8 experts of which 2 are used): what
// the reference engine's loader derives from the same keys. The estimate
// read from metadata alone (kv::family_layer_windows) agrees with the loader.
#include <gtest/gtest.h>
#include <hearth/engine/gguf/writer.h>
#include <hearth/engine/kv/sizing.h>
#include <hearth/engine/model/model.h>

#include <cmath>
#include <string>
#include <vector>

#include "fixture_logits.h"
#include "model_rewrite.h"

namespace hearth::model {
namespace {

const std::string kFixture = hearth::testing::data_path("models/tiny-gpt-oss-f32.gguf");

TEST(GptOssHParams, FixtureFollowsTheReferenceLoader) {
  auto model = Model::load(kFixture);
  ASSERT_TRUE(model.ok()) << model.error().message;
  const std::vector<int32_t> windows{16, 0};
  EXPECT_EQ((*model)->layer_windows(), windows);
  EXPECT_EQ(kv::family_layer_windows("gpt-oss", 16, 2), windows);
  const HParams& hp = (*model)->hparams();
  EXPECT_EQ(hp.rope.mode, backend::RopeMode::NeoX);
  EXPECT_FLOAT_EQ(hp.rope.freq_base, 150000.0f);
  EXPECT_FLOAT_EQ(hp.rope.freq_scale, 1.0f / 32.0f);
  EXPECT_FLOAT_EQ(hp.rope.ext_factor, 1.0f);
  EXPECT_FLOAT_EQ(hp.rope.attn_factor, 1.0f);
  EXPECT_EQ(hp.rope.n_ctx_orig, 4096);
  // Both kinds of layer rotate alike (no rope.freq_base_swa in the file).
  EXPECT_EQ(hp.rope_of_layer(0), &hp.rope);
  EXPECT_FLOAT_EQ(hp.attn_scale, 1.0f / 8.0f);  // rope.dimension_count 64
  EXPECT_EQ(hp.moe.gating, backend::MoeGating::SoftmaxSelected);
  EXPECT_FALSE(hp.moe.normalize);
  EXPECT_FLOAT_EQ(hp.moe.scale, 1.0f);
  EXPECT_EQ(hp.n_expert, 8);
  EXPECT_EQ(hp.n_expert_used, 2);
  EXPECT_EQ(hp.n_ff_exp, 128);
  EXPECT_NEAR(hp.rms_eps, 1e-6f, 1e-12f);
}

TEST(GptOssHParams, APatternFromTheFileOverridesTheAlternation) {
  const std::string path = hearth::testing::rewrite_model_with(
      kFixture, "hearth-gpt-oss-period0.gguf", "gpt-oss.attention.sliding_window_pattern", gguf::make_uint32(0));
  auto model = Model::load(path);
  ASSERT_TRUE(model.ok()) << model.error().message;
  EXPECT_EQ((*model)->layer_windows(), (std::vector<int32_t>{16, 16}));  // period 0: every layer windowed
}

TEST(GptOssHParams, AWindowOfZeroMakesEveryLayerGlobal) {
  const std::string zero = hearth::testing::rewrite_model_with(kFixture, "hearth-gpt-oss-nowindow.gguf",
                                                               "gpt-oss.attention.sliding_window", gguf::make_uint32(0));
  auto model = Model::load(zero);
  ASSERT_TRUE(model.ok()) << model.error().message;
  EXPECT_TRUE((*model)->layer_windows().empty());
}

}  // namespace
}  // namespace hearth::model
