// Gemma 3's sliding-window layers: the default pattern on the reference
// fixture (its README: 5 sliding-window layers of 24, then 1 global), a
// period or a per-layer list from the file's
// attention.sliding_window_pattern, and files that lie about it. The
// estimate read from metadata alone (kv::family_layer_windows) agrees with
// the loader.
#include <gtest/gtest.h>
#include <hearth/engine/gguf/writer.h>
#include <hearth/engine/kv/sizing.h>
#include <hearth/engine/model/model.h>

#include <string>
#include <vector>

#include "fixture_logits.h"
#include "model_rewrite.h"

namespace hearth::model {
namespace {

const std::string kFixture = hearth::testing::data_path("models/tiny-gemma3-f32.gguf");
constexpr const char* kPattern = "gemma3.attention.sliding_window_pattern";

std::string rewrite_with(const std::string& name, const std::string& key, gguf::Value value) {
  return hearth::testing::rewrite_model_with(kFixture, name, key, std::move(value));
}

gguf::Value bool_array(const std::vector<bool>& items) {
  gguf::Array a;
  a.element_type = gguf::ValueType::Bool;
  for (bool b : items) a.items.push_back(gguf::Value{gguf::ValueType::Bool, b});
  return gguf::Value{gguf::ValueType::Array, std::move(a)};
}

TEST(Gemma3Windows, FixtureHasFiveLocalLayersThenOneGlobal) {
  auto model = Model::load(kFixture);
  ASSERT_TRUE(model.ok()) << model.error().message;
  const std::vector<int32_t> want{24, 24, 24, 24, 24, 0};
  EXPECT_EQ((*model)->layer_windows(), want);
  EXPECT_EQ(kv::family_layer_windows("gemma3", 24, 6), want);
  // Local layers rotate with rope.freq_base_swa and no scaling; global ones
  // with rope.freq_base and the linear factor 8.
  const HParams& hp = (*model)->hparams();
  ASSERT_TRUE(hp.rope_swa.has_value());
  EXPECT_EQ(hp.rope_of_layer(0), &*hp.rope_swa);
  EXPECT_EQ(hp.rope_of_layer(5), &hp.rope);
  EXPECT_FLOAT_EQ(hp.rope_swa->freq_base, 10000.0f);
  EXPECT_FLOAT_EQ(hp.rope_swa->freq_scale, 1.0f);
  EXPECT_FLOAT_EQ(hp.rope.freq_base, 1000000.0f);
  EXPECT_FLOAT_EQ(hp.rope.freq_scale, 1.0f / 8.0f);
  EXPECT_EQ(hp.head_dim, 80);
}

TEST(Gemma3Windows, APeriodFromTheFileSetsTheGlobalLayers) {
  const std::string path = rewrite_with("hearth-gemma3-period3.gguf", kPattern, gguf::make_uint32(3));
  auto model = Model::load(path);
  ASSERT_TRUE(model.ok()) << model.error().message;
  EXPECT_EQ((*model)->layer_windows(), (std::vector<int32_t>{24, 24, 0, 24, 24, 0}));
}

TEST(Gemma3Windows, APerLayerListFromTheFileIsUsedAsIs) {
  const std::string path =
      rewrite_with("hearth-gemma3-list.gguf", kPattern, bool_array({false, true, true, false, true, false}));
  auto model = Model::load(path);
  ASSERT_TRUE(model.ok()) << model.error().message;
  EXPECT_EQ((*model)->layer_windows(), (std::vector<int32_t>{0, 24, 24, 0, 24, 0}));
}

TEST(Gemma3Windows, NoWindowMeansEveryLayerGlobal) {
  const std::string path =
      rewrite_with("hearth-gemma3-nowindow.gguf", "gemma3.attention.sliding_window", gguf::make_uint32(0));
  auto model = Model::load(path);
  ASSERT_TRUE(model.ok()) << model.error().message;
  EXPECT_TRUE((*model)->layer_windows().empty());
}

TEST(Gemma3Windows, AListOfTheWrongLengthOrTypeIsRefusedNamingTheKey) {
  const std::string short_list =
      rewrite_with("hearth-gemma3-short.gguf", kPattern, bool_array({true, true, false}));
  auto a = Model::load(short_list);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.error().code, ErrorCode::InvalidFormat);
  EXPECT_NE(a.error().message.find(kPattern), std::string::npos) << a.error().message;
  EXPECT_NE(a.error().message.find("3 entries for 6 layers"), std::string::npos) << a.error().message;

  const std::string strings =
      rewrite_with("hearth-gemma3-strings.gguf", kPattern, gguf::make_string_array({"a", "b", "c", "d", "e", "f"}));
  auto b = Model::load(strings);
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.error().code, ErrorCode::InvalidFormat);
  EXPECT_NE(b.error().message.find(kPattern), std::string::npos) << b.error().message;
}

}  // namespace
}  // namespace hearth::model
