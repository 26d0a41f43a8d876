#include <gtest/gtest.h>
#include <hearth/engine/gguf/reader.h>
#include <hearth/engine/gguf/writer.h>

#include <filesystem>
#include <fstream>

#include <unistd.h>

namespace hearth::gguf {
namespace {

std::filesystem::path temp_file(const std::string& name) {
  return std::filesystem::temp_directory_path() / ("hearth-writer-" + std::to_string(::getpid()) + "-" + name);
}

TEST(GgufWriter, RoundTripsMetadataAndTensors) {
  const auto path = temp_file("roundtrip.gguf");
  std::vector<KeyValue> meta;
  meta.push_back({"general.architecture", make_string("llama")});
  meta.push_back({"llama.block_count", make_uint32(3)});
  meta.push_back({"some.float", make_float32(0.5f)});
  meta.push_back({"some.flag", make_bool(true)});
  meta.push_back({"tokenizer.ggml.tokens", make_string_array({"<unk>", "<s>", "</s>", "hé"})});
  meta.push_back({"tokenizer.ggml.scores", make_float32_array({0.f, -1.f, -2.5f, 3.f})});
  std::vector<uint8_t> a(3 * 5 * 4), b(34 * 2);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<uint8_t>(i);
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<uint8_t>(255 - i);
  ASSERT_TRUE(GgufWriter::write_file(path, meta,
                                     {{TensorSpec{"a", DType::F32, {3, 5}}, a},
                                      {TensorSpec{"b", DType::Q8_0, {64}}, b}},
                                     64)
                  .ok());
  auto file = GgufFile::open(path);
  ASSERT_TRUE(file.ok()) << file.error().message;
  EXPECT_EQ(file->alignment(), 64u);
  EXPECT_EQ(*file->get_uint("llama.block_count"), 3u);
  EXPECT_FLOAT_EQ(static_cast<float>(*file->get_float("some.float")), 0.5f);
  EXPECT_TRUE(*file->get_bool("some.flag"));
  auto tokens = *file->get_string_array("tokenizer.ggml.tokens");
  EXPECT_EQ(tokens[3], "hé");
  EXPECT_EQ((*file->get_float_array("tokenizer.ggml.scores"))[2], -2.5);
  const TensorInfo* ta = file->find_tensor("a");
  const TensorInfo* tb = file->find_tensor("b");
  ASSERT_TRUE(ta && tb);
  EXPECT_EQ(ta->dims[0], 3);
  EXPECT_EQ(ta->dims[1], 5);
  EXPECT_EQ(tb->type, DType::Q8_0);
  auto da = file->tensor_data(*ta);
  auto db = file->tensor_data(*tb);
  EXPECT_TRUE(std::equal(da.begin(), da.end(), a.begin()));
  EXPECT_TRUE(std::equal(db.begin(), db.end(), b.begin()));
  EXPECT_EQ(tb->offset % 64, 0u);
  std::filesystem::remove(path);
}

TEST(GgufWriter, RejectsWrongDataSizeAndMissingTensors) {
  const auto path = temp_file("bad.gguf");
  GgufWriter w;
  ASSERT_TRUE(w.add_tensor(TensorSpec{"t", DType::F16, {8}}).ok());
  EXPECT_FALSE(w.add_tensor(TensorSpec{"q", DType::Q4_0, {16}}).ok());  // not a block multiple
  ASSERT_TRUE(w.begin(path).ok());
  std::vector<uint8_t> wrong(15);
  EXPECT_FALSE(w.write_tensor_data(wrong).ok());
  EXPECT_FALSE(w.finish().ok());
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace hearth::gguf
