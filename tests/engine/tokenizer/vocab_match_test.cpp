// Draft-model compatibility from the files' headers: same tokens accepted,
// another tokenizer refused with the first difference named.
#include <gtest/gtest.h>
#include <hearth/engine/tokenizer/vocab_match.h>

#include <string>

namespace hearth::tokenizer {
namespace {

std::string data(const std::string& rel) { return std::string(HEARTH_TEST_DATA_DIR) + "/" + rel; }

TEST(VocabMatch, AModelMatchesItselfAndItsQuantizedSiblings) {
  EXPECT_TRUE(check_draft_token_files(data("models/tiny-llama-f32.gguf"), data("models/tiny-llama-q4_0.gguf")).ok());
  EXPECT_TRUE(check_draft_token_files(data("models/tiny-qwen2-f16.gguf"), data("models/tiny-qwen2-q8_0.gguf")).ok());
  EXPECT_TRUE(check_draft_token_files(data("vocab/vocab-llama3.gguf"), data("vocab/vocab-llama3.gguf")).ok());
}

TEST(VocabMatch, AnotherTokenizerIsRefusedWithTheFirstDifference) {
  auto r = check_draft_token_files(data("models/stories260K.gguf"), data("models/tiny-llama-f32.gguf"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::Unsupported);
  EXPECT_NE(r.error().message.find("vocabulary"), std::string::npos) << r.error().message;
  auto sizes = check_draft_token_files(data("vocab/vocab-llama3.gguf"), data("vocab/vocab-qwen3.gguf"));
  ASSERT_FALSE(sizes.ok());
  EXPECT_NE(sizes.error().message.find("tokens"), std::string::npos) << sizes.error().message;
}

TEST(VocabMatch, AnUnreadableFileIsAnErrorNotAMatch) {
  auto r = check_draft_token_files(data("models/stories260K.gguf"), data("models/no-such-file.gguf"));
  EXPECT_FALSE(r.ok());
}

}  // namespace
}  // namespace hearth::tokenizer
