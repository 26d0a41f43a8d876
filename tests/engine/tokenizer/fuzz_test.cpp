// Fuzz-style properties on the real vocabularies: arbitrary bytes never
// crash and yield valid ids; byte-level BPE round-trips text and canonical
// id sequences.
#include <hearth/engine/tokenizer/stream_decoder.h>
#include <hearth/engine/tokenizer/tokenizer.h>
#include <hearth/engine/tokenizer/utf8.h>

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <random>
#include <thread>

#include "fixture_vocab.h"
#include "mixed_text.h"

namespace hearth::tokenizer {
namespace {

const char* const kVocabs[] = {"ggml-vocab-llama-spm.gguf", "ggml-vocab-phi-3.gguf", "ggml-vocab-gpt-2.gguf",
                               "ggml-vocab-deepseek-coder.gguf", "vocab-llama3.gguf", "vocab-qwen3.gguf"};
const char* const kBpeVocabs[] = {"ggml-vocab-gpt-2.gguf", "ggml-vocab-deepseek-coder.gguf", "vocab-llama3.gguf",
                                  "vocab-qwen3.gguf"};

class Fuzz : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    tokenizers_ = new std::map<std::string, Tokenizer>();
    for (const char* name : kVocabs) tokenizers_->emplace(name, testing::load_tokenizer(testing::vocab_dir() / name));
  }
  static void TearDownTestSuite() {
    delete tokenizers_;
    tokenizers_ = nullptr;
  }
  static const Tokenizer& tok(const char* name) { return tokenizers_->at(name); }
  static std::map<std::string, Tokenizer>* tokenizers_;
};
std::map<std::string, Tokenizer>* Fuzz::tokenizers_ = nullptr;

// Bytes biased towards UTF-8 structure: ASCII, lead and continuation bytes,
// whole characters, and pieces of special-token text.
std::string random_bytes(std::mt19937& rng, size_t max_len) {
  static const char* kFragments[] = {"<|im_end|>", "<s>", "</s>", "<|endoftext|>", "\xE4\xB8\xAD", "\xF0\x9F\xA6\x99",
                                     "'s", "  ", "\r\n", "\t", "\xC2\x85", "\xE3\x80\x80", "<0x0A>", "\xE2\x96\x81"};
  std::string s;
  const size_t len = rng() % (max_len + 1);
  while (s.size() < len) {
    switch (rng() % 5) {
      case 0: s += static_cast<char>(rng() % 256); break;
      case 1: s += static_cast<char>(0x20 + rng() % 0x5F); break;
      case 2: s += static_cast<char>(0x80 + rng() % 0x40); break;
      case 3: s += static_cast<char>(0xC0 + rng() % 0x40); break;
      default: s += kFragments[rng() % std::size(kFragments)]; break;
    }
  }
  return s;
}

TEST_F(Fuzz, RandomBytesNeverCrashAndGiveValidIds) {
  std::mt19937 rng(42);
  for (const char* name : kVocabs) {
    const Tokenizer& t = tok(name);
    for (int i = 0; i < 300; ++i) {
      const std::string text = random_bytes(rng, 64);
      for (const auto parse : {ParseSpecial::No, ParseSpecial::Yes}) {
        const auto ids = t.tokenize(text, AddSpecial::AsVocab, parse);
        for (const TokenId id : ids) ASSERT_TRUE(t.vocab().valid(id)) << name << " id " << id;
        // Decoding anything must not crash either, and streaming gives valid UTF-8.
        (void)t.detokenize(ids);
        StreamDecoder dec(t);
        std::string streamed;
        for (const TokenId id : ids) streamed += dec.push(id);
        streamed += dec.flush();
        ASSERT_TRUE(utf8_valid(streamed)) << name;
      }
    }
  }
}

TEST_F(Fuzz, ControlTokensNeverComeFromUserText) {
  std::mt19937 rng(7);
  for (const char* name : kVocabs) {
    const Tokenizer& t = tok(name);
    for (int i = 0; i < 200; ++i) {
      const auto ids = t.tokenize(random_bytes(rng, 64), AddSpecial::No, ParseSpecial::No);
      for (const TokenId id : ids) {
        ASSERT_FALSE(has_any(t.vocab().attr(id), TokenAttr::Control)) << name << " produced control token " << id;
      }
    }
  }
}

TEST_F(Fuzz, ValidUtf8RoundTripsThroughBpe) {
  std::mt19937 rng(3);
  for (const char* name : kBpeVocabs) {
    const Tokenizer& t = tok(name);
    DetokenizeOptions raw;
    raw.cleanup = SpaceCleanup::None;
    for (int i = 0; i < 300; ++i) {
      std::string text = utf8_sanitize(random_bytes(rng, 80));
      if (i % 3 == 0) text = testing::mixed_text(200, static_cast<uint32_t>(i));
      const auto ids = t.tokenize(text, AddSpecial::No);
      ASSERT_EQ(t.detokenize(ids, raw), text) << name;
    }
  }
}

// tokenize(detokenize(ids)) == ids for canonical id sequences: the ids the
// tokenizer itself produces for some text. (An arbitrary id sequence is
// generally not canonical: "a"+"b" decodes to the text that tokenizes to "ab".)
TEST_F(Fuzz, CanonicalIdsRoundTripThroughBpe) {
  std::mt19937 rng(11);
  for (const char* name : kBpeVocabs) {
    const Tokenizer& t = tok(name);
    DetokenizeOptions raw;
    raw.cleanup = SpaceCleanup::None;
    for (int i = 0; i < 300; ++i) {
      const std::string text =
          i % 2 ? utf8_sanitize(random_bytes(rng, 80)) : testing::mixed_text(100 + rng() % 200, rng());
      const auto ids = t.tokenize(text, AddSpecial::No);
      const auto again = t.tokenize(t.detokenize(ids, raw), AddSpecial::No);
      ASSERT_EQ(again, ids) << name << " text '" << text << "'";
    }
  }
}

// Random normal tokens glued together: whatever text they spell, its
// tokenization decodes to the same text again.
TEST_F(Fuzz, RandomIdTextIsStableThroughBpe) {
  std::mt19937 rng(5);
  for (const char* name : kBpeVocabs) {
    const Tokenizer& t = tok(name);
    const Vocabulary& v = t.vocab();
    DetokenizeOptions raw;
    raw.cleanup = SpaceCleanup::None;
    int checked = 0;
    for (int i = 0; i < 400; ++i) {
      std::vector<TokenId> ids;
      const int n = 1 + static_cast<int>(rng() % 12);
      while (static_cast<int>(ids.size()) < n) {
        const auto id = static_cast<TokenId>(rng() % v.size());
        if (v.attr(id) == TokenAttr::Normal) ids.push_back(id);
      }
      const std::string text = t.detokenize(ids, raw);
      if (!utf8_valid(text)) continue;  // byte pieces of a split character
      ++checked;
      ASSERT_EQ(t.detokenize(t.tokenize(text, AddSpecial::No), raw), text) << name;
    }
    EXPECT_GT(checked, 100) << name;
  }
}

// One tokenizer shared by several threads (the word cache is shared too)
// gives every thread the same ids as a single-threaded run.
TEST_F(Fuzz, ConcurrentTokenizeAgreesWithSerial) {
  const Tokenizer& t = tok("vocab-qwen3.gguf");
  std::vector<std::string> texts;
  for (uint32_t i = 0; i < 40; ++i) texts.push_back(testing::mixed_text(2000, 100 + i));
  t.clear_cache();
  std::vector<std::vector<TokenId>> expected;
  for (const auto& text : texts) expected.push_back(t.tokenize(text));
  t.clear_cache();
  std::vector<int> mismatches(4, 0);
  std::vector<std::thread> threads;
  for (size_t w = 0; w < mismatches.size(); ++w) {
    threads.emplace_back([&, w] {
      for (size_t round = 0; round < 3; ++round) {
        for (size_t i = 0; i < texts.size(); ++i) {
          const size_t k = (i + w * 7) % texts.size();
          if (t.tokenize(texts[k]) != expected[k]) ++mismatches[w];
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  for (const int m : mismatches) EXPECT_EQ(m, 0);
}

}  // namespace
}  // namespace hearth::tokenizer
