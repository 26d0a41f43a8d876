// Every case of every reference vocabulary must tokenize to exactly the
// reference engine's ids, and detokenize back to its text.
#include <hearth/engine/tokenizer/tokenizer.h>
#include <hearth/engine/tokenizer/utf8.h>
#include <hearth/engine/gguf/reader.h>

#include <algorithm>
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
  // The six vocabularies listed in tests/data/FIXTURES-README.md and the
  // goldens of three of them without tokenizer.ggml.pre.
  EXPECT_GE(fixtures.size(), 9u);
  for (const auto& f : fixtures) EXPECT_FALSE(f.cases.empty()) << f.name;
}

class VocabConformance : public ::testing::TestWithParam<std::string> {};

TEST_P(VocabConformance, TokenizesEveryCaseExactly) {
  for (const auto& f : all_vocab_fixtures()) {
    if (f.name != GetParam()) continue;
    const Tokenizer tok = testing::load_fixture_tokenizer(f);
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
    const Tokenizer tok = testing::load_fixture_tokenizer(f);
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

namespace hearth::tokenizer {
namespace {

// The goldens made without tokenizer.ggml.pre (the reference's default split).
std::vector<testing::VocabFixture> fixtures_without_pre() {
  std::vector<testing::VocabFixture> out;
  for (auto& f : all_vocab_fixtures()) {
    if (std::find(f.without_keys.begin(), f.without_keys.end(), "tokenizer.ggml.pre") != f.without_keys.end()) {
      out.push_back(std::move(f));
    }
  }
  return out;
}

TEST(TokenizerConformance, VocabulariesWithoutPreKeyArePresent) {
  const auto fixtures = fixtures_without_pre();
  EXPECT_GE(fixtures.size(), 2u);
  for (const auto& f : fixtures) {
    const Tokenizer tok = testing::load_fixture_tokenizer(f);
    EXPECT_TRUE(tok.vocab().pre_name.empty()) << f.name;
    EXPECT_EQ(tok.vocab().pre, PreTokenizerKind::Default) << f.name;
  }
}

// The goldens must tell the default split from GPT-2's (the split Hearth
// once used for such files), or they would not guard the default rules.
TEST(TokenizerConformance, DefaultSplitGoldensDifferFromGpt2Split) {
  for (const auto& f : fixtures_without_pre()) {
    const Tokenizer tok = testing::load_fixture_tokenizer(f);
    Vocabulary gpt2 = tok.vocab();
    gpt2.pre = PreTokenizerKind::Gpt2;
    auto gpt2_tok = Tokenizer::create(std::move(gpt2));
    ASSERT_TRUE(gpt2_tok.ok()) << gpt2_tok.error().message;
    size_t differ = 0;
    for (const auto& c : f.cases) {
      if (gpt2_tok->tokenize(c.text, AddSpecial::AsVocab, ParseSpecial::No) != c.ids) ++differ;
    }
    EXPECT_GE(differ, f.cases.size() / 5) << f.name << ": only " << differ << " of " << f.cases.size();
  }
}

// An unknown tokenizer.ggml.pre name gets the default split too, and says so
// in a warning that names the file and the name.
TEST(TokenizerConformance, UnknownPreNameUsesDefaultSplitWithWarning) {
  const auto fixtures = fixtures_without_pre();
  ASSERT_FALSE(fixtures.empty());
  const auto& f = fixtures.front();
  std::vector<std::string> warnings;
  const Logger logger([&](LogLevel level, std::string_view m) {
    if (level == LogLevel::Warn) warnings.emplace_back(m);
  });
  auto tok = testing::load_tokenizer_variant(
      f.gguf, {}, {{"tokenizer.ggml.pre", gguf::make_string("no-such-pre-tokenizer")}}, logger);
  ASSERT_TRUE(tok.ok()) << tok.error().message;
  EXPECT_EQ(tok->vocab().pre, PreTokenizerKind::Default);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("no-such-pre-tokenizer"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[0].find(".gguf"), std::string::npos) << warnings[0];
  size_t mismatches = 0;
  for (const auto& c : f.cases) {
    const auto ids = tok->tokenize(c.text, AddSpecial::AsVocab, ParseSpecial::No);
    if (ids != c.ids) {
      ++mismatches;
      ADD_FAILURE() << f.name << ": text '" << c.text << "'\n  expected: " << ids_to_string(c.ids)
                    << "\n  actual:   " << ids_to_string(ids);
    }
  }
  EXPECT_EQ(mismatches, 0u);
}

}  // namespace
}  // namespace hearth::tokenizer
