// Reading `tokenizer.ggml.*` from GGUF files written for the test: defaults,
// validation errors that name the key, and the default pre-tokenizer for a
// missing or unknown tokenizer.ggml.pre.
#include <hearth/engine/gguf/reader.h>
#include <hearth/engine/gguf/writer.h>
#include <hearth/engine/tokenizer/tokenizer.h>

#include <gtest/gtest.h>

#include <filesystem>

namespace hearth::tokenizer {
namespace {

namespace fs = std::filesystem;
using gguf::KeyValue;

class VocabGguf : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = fs::temp_directory_path() /
            (std::string("hearth_vocab_") + ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".gguf");
  }
  void TearDown() override { fs::remove(path_); }

  // A tiny byte-level BPE vocabulary: a, b, ab, <|end|>.
  std::vector<KeyValue> bpe_metadata(const std::string& pre) {
    return {
        {"general.architecture", gguf::make_string("llama")},
        {"tokenizer.ggml.model", gguf::make_string("gpt2")},
        {"tokenizer.ggml.pre", gguf::make_string(pre)},
        {"tokenizer.ggml.tokens", gguf::make_string_array({"a", "b", "ab", "<|end|>"})},
        {"tokenizer.ggml.token_type", gguf::make_int32_array({1, 1, 1, 3})},
        {"tokenizer.ggml.merges", gguf::make_string_array({"a b"})},
        {"tokenizer.ggml.eos_token_id", gguf::make_uint32(3)},
    };
  }

  Result<Tokenizer> load(std::vector<KeyValue> metadata, const Logger& logger = {}) {
    auto st = gguf::GgufWriter::write_file(path_, std::move(metadata), {});
    EXPECT_TRUE(st.ok()) << (st.ok() ? "" : st.error().message);
    auto file = gguf::GgufFile::open(path_);
    if (!file.ok()) return file.take_error();
    return Tokenizer::from_gguf(*file, logger);
  }

  fs::path path_;
};

TEST_F(VocabGguf, ReadsBpeVocabularyWithDefaults) {
  auto tok = load(bpe_metadata("gpt-2"));
  ASSERT_TRUE(tok.ok()) << tok.error().message;
  const Vocabulary& v = tok->vocab();
  EXPECT_EQ(v.kind, VocabKind::BytePairBpe);
  EXPECT_EQ(v.pre, PreTokenizerKind::Gpt2);
  EXPECT_EQ(v.special.eos, 3);
  EXPECT_FALSE(v.add_bos);
  EXPECT_TRUE(v.clean_spaces);
  EXPECT_TRUE(v.is_eog(3));  // EOS and the <|end|> marker
  EXPECT_EQ(tok->tokenize("ab"), (std::vector<TokenId>{2}));
}

TEST_F(VocabGguf, LlamaBpeAddsBosAndIgnoresMergesByDefault) {
  auto md = bpe_metadata("llama-bpe");
  md.push_back({"tokenizer.ggml.bos_token_id", gguf::make_uint32(3)});
  auto tok = load(md);
  ASSERT_TRUE(tok.ok()) << tok.error().message;
  EXPECT_TRUE(tok->vocab().add_bos);
  EXPECT_TRUE(tok->vocab().ignore_merges);
  EXPECT_EQ(tok->vocab().pre, PreTokenizerKind::Llama3);
}

TEST_F(VocabGguf, UnknownPreTokenizerFallsBackToDefaultWithAWarning) {
  std::vector<std::string> warnings;
  const Logger logger([&](LogLevel level, std::string_view m) {
    if (level == LogLevel::Warn) warnings.emplace_back(m);
  });
  auto tok = load(bpe_metadata("made-up-pre"), logger);
  ASSERT_TRUE(tok.ok()) << tok.error().message;
  EXPECT_EQ(tok->vocab().pre, PreTokenizerKind::Default);
  EXPECT_EQ(tok->vocab().pre_name, "made-up-pre");
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("made-up-pre"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[0].find(path_.filename().string()), std::string::npos) << warnings[0];
}

TEST_F(VocabGguf, MissingPreTokenizerUsesDefaultWithAWarning) {
  std::vector<std::string> warnings;
  const Logger logger([&](LogLevel level, std::string_view m) {
    if (level == LogLevel::Warn) warnings.emplace_back(m);
  });
  auto md = bpe_metadata("");
  std::erase_if(md, [](const KeyValue& kv) { return kv.key == "tokenizer.ggml.pre"; });
  auto tok = load(md, logger);
  ASSERT_TRUE(tok.ok()) << tok.error().message;
  EXPECT_EQ(tok->vocab().pre, PreTokenizerKind::Default);
  EXPECT_TRUE(tok->vocab().clean_spaces);
  EXPECT_FALSE(tok->vocab().ignore_merges);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("tokenizer.ggml.pre"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[0].find(path_.filename().string()), std::string::npos) << warnings[0];
  EXPECT_EQ(tok->tokenize("ab"), (std::vector<TokenId>{2}));
}

TEST_F(VocabGguf, SpecialIdOutsideVocabularyNamesTheKey) {
  auto md = bpe_metadata("gpt-2");
  md.push_back({"tokenizer.ggml.bos_token_id", gguf::make_uint32(4)});
  auto tok = load(md);
  ASSERT_FALSE(tok.ok());
  EXPECT_NE(tok.error().message.find("tokenizer.ggml.bos_token_id"), std::string::npos) << tok.error().message;
  EXPECT_NE(tok.error().message.find("4"), std::string::npos);
}

TEST_F(VocabGguf, ArrayLengthMismatchIsAnError) {
  auto md = bpe_metadata("gpt-2");
  md[4] = {"tokenizer.ggml.token_type", gguf::make_int32_array({1, 1})};
  auto tok = load(md);
  ASSERT_FALSE(tok.ok());
  EXPECT_NE(tok.error().message.find("tokenizer.ggml.token_type"), std::string::npos) << tok.error().message;
}

TEST_F(VocabGguf, MissingMergesAndUnknownModelAreErrors) {
  auto md = bpe_metadata("gpt-2");
  md.erase(md.begin() + 5);
  auto no_merges = load(md);
  ASSERT_FALSE(no_merges.ok());
  EXPECT_NE(no_merges.error().message.find("tokenizer.ggml.merges"), std::string::npos);

  auto other = bpe_metadata("gpt-2");
  other[1] = {"tokenizer.ggml.model", gguf::make_string("t5")};
  auto unsupported = load(other);
  ASSERT_FALSE(unsupported.ok());
  EXPECT_EQ(unsupported.error().code, ErrorCode::Unsupported);
}

TEST_F(VocabGguf, SentencePieceDefaults) {
  std::vector<KeyValue> md = {
      {"general.architecture", gguf::make_string("llama")},
      {"tokenizer.ggml.model", gguf::make_string("llama")},
      {"tokenizer.ggml.tokens", gguf::make_string_array({"<unk>", "<s>", "</s>", "\xE2\x96\x81" "a"})},
      {"tokenizer.ggml.scores", gguf::make_float32_array({0, 0, 0, -1})},
      {"tokenizer.ggml.token_type", gguf::make_int32_array({2, 3, 3, 1})},
  };
  auto tok = load(md);
  ASSERT_TRUE(tok.ok()) << tok.error().message;
  const Vocabulary& v = tok->vocab();
  EXPECT_EQ(v.special.bos, 1);
  EXPECT_EQ(v.special.eos, 2);
  EXPECT_EQ(v.special.unk, 0);
  EXPECT_TRUE(v.add_bos);
  EXPECT_TRUE(v.add_space_prefix);
  EXPECT_EQ(tok->tokenize("a"), (std::vector<TokenId>{1, 3}));
}

}  // namespace
}  // namespace hearth::tokenizer
