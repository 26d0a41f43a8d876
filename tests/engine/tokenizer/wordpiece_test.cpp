// WordPiece (tokenizer.ggml.model = "bert") on the tiny BERT fixture's
// vocabulary, against BERT's basic tokenizer and greedy longest-match
// rules worked out by hand from the vocabulary (the reference engine's ids
// for real texts are checked in tests/engine/runtime/embedder_test.cpp).
#include <gtest/gtest.h>
#include <hearth/engine/gguf/reader.h>
#include <hearth/engine/tokenizer/tokenizer.h>

#include <string>
#include <vector>

namespace hearth::tokenizer {
namespace {

Tokenizer bert() {
  auto file = gguf::GgufFile::open(std::string(HEARTH_TEST_DATA_DIR) + "/embeddings/tiny-bert-f32.gguf");
  EXPECT_TRUE(file.ok());
  auto t = Tokenizer::from_gguf(*file);
  EXPECT_TRUE(t.ok()) << (t.ok() ? "" : t.error().message);
  return std::move(t).value();
}

TEST(WordPiece, ReadsTheVocabularyAsBert) {
  const Tokenizer t = bert();
  EXPECT_EQ(t.vocab().kind, VocabKind::WordPiece);
  EXPECT_EQ(t.vocab().special.bos, 2);  // [CLS]
  EXPECT_EQ(t.vocab().special.sep, 3);  // [SEP]
  EXPECT_EQ(t.vocab().special.unk, 1);  // [UNK]
}

TEST(WordPiece, FollowsBertsBasicTokenizerAndGreedyPieces) {
  const Tokenizer t = bert();
  struct Case {
    const char* text;
    std::vector<TokenId> ids;
  };
  const Case cases[] = {
      // Accents removed and lowercased; punctuation split off; "▁c" then
      // continuation letters where no longer word-start piece exists.
      {"Café, naïve!", {2, 7, 51, 56, 55, 42, 18, 51, 59, 72, 55, 43, 3}},
      // A word with a position no piece matches is [UNK] as a whole.
      {"dog\xe2\x98\x83 cat", {2, 1, 152, 3}},
      // Tabs and no-break spaces separate words; "▁play" + "ing".
      {"PLAYING\tthe\xc2\xa0" "dog", {2, 133, 215, 97, 151, 3}},
      {"big-house", {2, 123, 46, 154, 3}},
      // Each CJK ideograph is a word of its own (both unknown here).
      {"\xe6\xbc\xa2\xe5\xad\x97", {2, 1, 1, 3}},
      {"\xc3\x80\xc3\x89\xc3\x8e", {2, 5, 55, 59, 3}},
      {"", {2, 3}},
  };
  for (const Case& c : cases) EXPECT_EQ(t.tokenize(c.text), c.ids) << c.text;
  EXPECT_EQ(t.tokenize("a dog", AddSpecial::No), (std::vector<TokenId>{5, 151}));
}

TEST(WordPiece, InvalidUtf8AndControlsAreDropped) {
  const Tokenizer t = bert();
  EXPECT_EQ(t.tokenize(std::string("\xff" "dog\x01\x00", 6)), (std::vector<TokenId>{2, 151, 3}));
}

TEST(WordPiece, DetokenizesWordStartsAsSpaces) {
  const Tokenizer t = bert();
  EXPECT_EQ(t.detokenize(std::vector<TokenId>{133, 215, 97, 151}), "playing the dog");
}

}  // namespace
}  // namespace hearth::tokenizer
