#include <gtest/gtest.h>
#include <hearth/engine/gguf/reader.h>

#include <filesystem>
#include <string>

namespace hearth::gguf {
namespace {

const std::filesystem::path kModels = std::filesystem::path(HEARTH_TEST_DATA_DIR) / "models";
const std::filesystem::path kVocab = std::filesystem::path(HEARTH_TEST_DATA_DIR) / "vocab";

class FixtureModels : public ::testing::TestWithParam<std::string> {};

// Shapes from the fixture README: tiny-llama has n_embd 256, 2 layers,
// n_ff 768, 4 heads of 64 with 2 KV heads; tiny-qwen2 n_embd 256, n_ff 512.
TEST_P(FixtureModels, LoadsWithConsistentMetadataAndTensors) {
  auto file = GgufFile::open(kModels / GetParam());
  ASSERT_TRUE(file.ok()) << file.error().message;
  EXPECT_GE(file->version(), 2u);
  auto arch = file->architecture();
  ASSERT_TRUE(arch.ok());
  const bool llama = GetParam().rfind("tiny-llama", 0) == 0;
  const bool qwen = GetParam().rfind("tiny-qwen2", 0) == 0;
  if (llama) {
    EXPECT_EQ(*arch, "llama");
  }
  if (qwen) {
    EXPECT_EQ(*arch, "qwen2");
  }
  if (llama || qwen) {
    EXPECT_EQ(*file->get_uint(*arch + ".block_count"), 2u);
    EXPECT_EQ(*file->get_uint(*arch + ".embedding_length"), 256u);
    EXPECT_EQ(*file->get_uint(*arch + ".feed_forward_length"), llama ? 768u : 512u);
    EXPECT_EQ(*file->get_array_size("tokenizer.ggml.tokens"), 512u);
    EXPECT_EQ(*file->get_uint("tokenizer.ggml.bos_token_id"), 1u);
    EXPECT_EQ(*file->get_uint("tokenizer.ggml.eos_token_id"), 2u);
    EXPECT_TRUE(file->chat_template().has_value());
    const TensorInfo* embd = file->find_tensor("token_embd.weight");
    ASSERT_NE(embd, nullptr);
    EXPECT_EQ(embd->dims[0], 256);
    EXPECT_EQ(embd->dims[1], 512);
    EXPECT_EQ(file->find_tensor("output.weight") != nullptr, llama);  // qwen2 ties the output
  }
  // Every tensor's data lies inside the file and is aligned.
  for (const auto& t : file->tensors()) {
    EXPECT_EQ(t.offset % file->alignment(), 0u) << t.name;
    EXPECT_LE(file->data_offset() + t.offset + t.bytes, file->file_size()) << t.name;
    EXPECT_EQ(file->tensor_data(t).size(), t.bytes);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Fixtures, FixtureModels,
    ::testing::Values("stories260K.gguf", "tiny-llama-f16.gguf", "tiny-llama-f32.gguf", "tiny-llama-q4_0.gguf",
                      "tiny-llama-q4_k_m.gguf", "tiny-llama-q6_k.gguf", "tiny-llama-q8_0.gguf",
                      "tiny-qwen2-f16.gguf", "tiny-qwen2-q4_k_m.gguf", "tiny-qwen2-q8_0.gguf"),
    [](const ::testing::TestParamInfo<std::string>& param_info) {
      std::string name = param_info.param;
      for (char& c : name) if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
      return name;
    });

TEST(GgufReader, QuantTypesOfFixturesAreWhatTheirNamesSay) {
  auto q8 = GgufFile::open(kModels / "tiny-llama-q8_0.gguf");
  ASSERT_TRUE(q8.ok());
  EXPECT_EQ(q8->find_tensor("blk.0.attn_q.weight")->type, DType::Q8_0);
  EXPECT_EQ(q8->find_tensor("blk.0.attn_norm.weight")->type, DType::F32);
  auto q4k = GgufFile::open(kModels / "tiny-llama-q4_k_m.gguf");
  ASSERT_TRUE(q4k.ok());
  EXPECT_EQ(q4k->find_tensor("blk.0.attn_q.weight")->type, DType::Q4_K);
  EXPECT_EQ(q4k->find_tensor("output.weight")->type, DType::Q6_K);
}

TEST(GgufReader, MemoryModeMatchesMmap) {
  auto mapped = GgufFile::open(kModels / "tiny-llama-q4_0.gguf", LoadMode::Mmap);
  auto loaded = GgufFile::open(kModels / "tiny-llama-q4_0.gguf", LoadMode::Memory);
  ASSERT_TRUE(mapped.ok() && loaded.ok());
  ASSERT_EQ(mapped->tensors().size(), loaded->tensors().size());
  for (size_t i = 0; i < mapped->tensors().size(); ++i) {
    auto a = mapped->tensor_data(mapped->tensors()[i]);
    auto b = loaded->tensor_data(loaded->tensors()[i]);
    ASSERT_EQ(a.size(), b.size());
    EXPECT_TRUE(std::equal(a.begin(), a.end(), b.begin())) << mapped->tensors()[i].name;
  }
}

TEST(GgufReader, VocabularyOnlyFilesLoad) {
  for (const char* name : {"vocab-llama3.gguf", "vocab-qwen3.gguf", "ggml-vocab-gpt-2.gguf",
                           "ggml-vocab-llama-spm.gguf"}) {
    auto file = GgufFile::open(kVocab / name);
    ASSERT_TRUE(file.ok()) << file.error().message;
    EXPECT_TRUE(file->tensors().empty());
    auto tokens = file->get_string_array("tokenizer.ggml.tokens");
    ASSERT_TRUE(tokens.ok());
    EXPECT_GT(tokens->size(), 1000u);
  }
  auto llama3 = GgufFile::open(kVocab / "vocab-llama3.gguf");
  EXPECT_EQ(*llama3->get_array_size("tokenizer.ggml.tokens"), 128256u);
  EXPECT_EQ(*llama3->get_string("tokenizer.ggml.model"), "gpt2");
}

TEST(GgufReader, TypedAccessorsRejectWrongTypes) {
  auto file = GgufFile::open(kModels / "tiny-llama-f32.gguf");
  ASSERT_TRUE(file.ok());
  auto as_string = file->get_string("llama.block_count");
  ASSERT_FALSE(as_string.ok());
  EXPECT_EQ(as_string.error().code, ErrorCode::InvalidFormat);
  EXPECT_NE(as_string.error().message.find("llama.block_count"), std::string::npos);
  auto wrong_array = file->get_float_array("tokenizer.ggml.tokens");
  ASSERT_FALSE(wrong_array.ok());
  auto absent = file->get_uint("no.such.key");
  ASSERT_FALSE(absent.ok());
  EXPECT_EQ(absent.error().code, ErrorCode::NotFound);
  auto optional = file->find_uint("no.such.key");
  ASSERT_TRUE(optional.ok());
  EXPECT_FALSE(optional->has_value());
}

TEST(GgufReader, MissingFileIsAnIoErrorNamingThePath) {
  auto file = GgufFile::open(kModels / "does-not-exist.gguf");
  ASSERT_FALSE(file.ok());
  EXPECT_EQ(file.error().code, ErrorCode::Io);
  EXPECT_NE(file.error().message.find("does-not-exist.gguf"), std::string::npos);
}

}  // namespace
}  // namespace hearth::gguf
