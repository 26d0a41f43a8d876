// Every case of every reference vocabulary must tokenize to exactly the
// reference engine's ids, and detokenize back to its text.
#include <hearth/engine/tokenizer/tokenizer.h>
#include <hearth/engine/tokenizer/utf8.h>
#include <hearth/engine/gguf/reader.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "fixture_vocab.h"

namespace hearth::tokenizer {
namespace {

using testing::all_vocab_fixtures;
using testing::ids_to_string;
using testing::load_tokenizer;

TEST(TokenizerConformance, FixturesArePresent) {
  const auto fixtures = all_vocab_fixtures();
  // The six vocabularies listed in tests/data/FIXTURES-README.md.
  EXPECT_GE(fixtures.size(), 6u);
  for (const auto& f : fixtures) EXPECT_FALSE(f.cases.empty()) << f.name;
}

class VocabConformance : public ::testing::TestWithParam<std::string> {};

TEST_P(VocabConformance, TokenizesEveryCaseExactly) {
  for (const auto& f : all_vocab_fixtures()) {
    if (f.name != GetParam()) continue;
    const Tokenizer tok = load_tokenizer(f.gguf);
    size_t mismatches = 0;
    for (const auto& c : f.cases) {
      const auto ids = tok.tokenize(c.text, f.add_special ? AddSpecial::AsVocab : AddSpecial::No,
                                    f.parse_special ? ParseSpecial::Yes : ParseSpecial::No);
      if (ids != c.ids) {
        ++mismatches;
        ADD_FAILURE() << f.name << ": text '" << c.text << "'\n  expected: " << ids_to_string(c.ids)
                      << "\n  actual:   " << ids_to_string(ids);
      }
    }
    EXPECT_EQ(mismatches, 0u) << f.name << ": " << mismatches << " of " << f.cases.size() << " cases differ";
    return;
  }
  FAIL() << "no fixture " << GetParam();
}

TEST_P(VocabConformance, DetokenizesReferenceIdsBackToText) {
  for (const auto& f : all_vocab_fixtures()) {
    if (f.name != GetParam()) continue;
    const Tokenizer tok = load_tokenizer(f.gguf);
    const Vocabulary& v = tok.vocab();
    for (const auto& c : f.cases) {
      std::vector<TokenId> ids = c.ids;
      // The BOS that tokenization added is not text; the reference keeps the
      // SentencePiece space prefix of the token after a BOS, so decode the
      // text tokens on their own, where that prefix is dropped.
      if (f.add_special && v.add_bos && !ids.empty() && ids.front() == v.special.bos) ids.erase(ids.begin());
      if (f.add_special && v.add_eos && !ids.empty() && ids.back() == v.special.eos) ids.pop_back();
      DetokenizeOptions raw;
      raw.cleanup = SpaceCleanup::None;
      EXPECT_EQ(tok.detokenize(ids, raw), c.text) << f.name << " ids " << ids_to_string(ids);
    }
    return;
  }
  FAIL() << "no fixture " << GetParam();
}

// A BOS at the front keeps the next token's space prefix (the reference's
// rule), and the SentencePiece prefix is otherwise dropped.
TEST(TokenizerConformance, LeadingSpaceAfterBosAsReference) {
  const Tokenizer tok = load_tokenizer(testing::vocab_dir() / "ggml-vocab-llama-spm.gguf");
  const auto ids = tok.tokenize("Hello world");
  ASSERT_FALSE(ids.empty());
  ASSERT_EQ(ids.front(), tok.vocab().special.bos);
  EXPECT_EQ(tok.detokenize(ids), " Hello world");
  DetokenizeOptions remove;
  remove.remove_special = RemoveSpecial::Yes;
  EXPECT_EQ(tok.detokenize(ids, remove), " Hello world");
  EXPECT_EQ(tok.detokenize(std::span(ids).subspan(1)), "Hello world");
  DetokenizeOptions show;
  show.show_special = ShowSpecial::Yes;
  EXPECT_EQ(tok.detokenize(ids, show), "<s> Hello world");
}

std::vector<std::string> fixture_names() {
  std::vector<std::string> names;
  for (const auto& f : all_vocab_fixtures()) names.push_back(f.name);
  return names;
}

std::string test_name(const ::testing::TestParamInfo<std::string>& param) {
  std::string n = param.param;
  for (char& ch : n) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return n;
}

INSTANTIATE_TEST_SUITE_P(AllVocabularies, VocabConformance, ::testing::ValuesIn(fixture_names()), test_name);

}  // namespace
}  // namespace hearth::tokenizer

namespace hearth::tokenizer {
namespace {

// stories260K stores "no separator token" as 0xFFFFFFFF; it must load, and
// "Once upon a time" must give the reference's prompt ids (fixture README).
TEST(TokenizerConformance, Stories260KPromptMatchesReferenceIds) {
  auto file = hearth::gguf::GgufFile::open(std::filesystem::path(HEARTH_TEST_DATA_DIR) / "models" / "stories260K.gguf");
  ASSERT_TRUE(file.ok()) << file.error().message;
  auto tok = Tokenizer::from_gguf(*file);
  ASSERT_TRUE(tok.ok()) << tok.error().message;
  std::ifstream in(std::filesystem::path(HEARTH_TEST_DATA_DIR) / "models" / "stories260K.prompt-tokens.txt");
  std::vector<TokenId> expected;
  for (TokenId id; in >> id;) expected.push_back(id);
  ASSERT_EQ(expected.size(), 5u);
  EXPECT_EQ(tok->tokenize("Once upon a time"), expected);
}

}  // namespace
}  // namespace hearth::tokenizer
