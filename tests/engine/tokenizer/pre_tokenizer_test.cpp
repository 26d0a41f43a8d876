// Pre-tokenizer splits, with expectations worked out from each model's
// published regex (matches and the text between them are both pieces).
#include <hearth/engine/tokenizer/pre_tokenizer.h>

#include <gtest/gtest.h>

namespace hearth::tokenizer {
namespace {

using Pieces = std::vector<std::string>;

Pieces split(PreTokenizerKind kind, std::string_view text) {
  auto pre = PreTokenizer::create(kind);
  EXPECT_TRUE(pre.ok()) << (pre.ok() ? "" : pre.error().message);
  Pieces out;
  for (const Span s : pre->split(text)) out.emplace_back(text.substr(s.begin, s.end - s.begin));
  return out;
}

TEST(PreTokenizer, EveryKindCompiles) {
  for (const auto kind : {PreTokenizerKind::Default, PreTokenizerKind::Gpt2, PreTokenizerKind::Llama3, PreTokenizerKind::Qwen2,
                          PreTokenizerKind::DeepseekCoder, PreTokenizerKind::DeepseekLlm, PreTokenizerKind::Falcon,
                          PreTokenizerKind::Starcoder}) {
    auto pre = PreTokenizer::create(kind);
    EXPECT_TRUE(pre.ok()) << to_string(kind) << ": " << (pre.ok() ? "" : pre.error().message);
  }
}

// The reference's default: punctuation (and $+<=>^~|) runs first, then
// GPT-2's split, then digit runs cut loose and into groups of three.
TEST(PreTokenizer, DefaultSplit) {
  const auto kind = PreTokenizerKind::Default;
  EXPECT_EQ(split(kind, "Hello, world!"), (Pieces{"Hello", ",", " world", "!"}));
  EXPECT_EQ(split(kind, "x 12345!!"), (Pieces{"x", " ", "123", "45", "!!"}));
  EXPECT_EQ(split(kind, "ab1234567"), (Pieces{"ab", "123", "456", "7"}));
  // The apostrophe is punctuation, so contractions come apart.
  EXPECT_EQ(split(kind, "I'm"), (Pieces{"I", "'", "m"}));
  EXPECT_EQ(split(kind, "a+b=c|d"), (Pieces{"a", "+", "b", "=", "c", "|", "d"}));
  // The backtick and non-ASCII symbols are not in the first pass.
  EXPECT_EQ(split(kind, "`x`"), (Pieces{"`", "x", "`"}));
  EXPECT_EQ(split(kind, "a \xE2\x82\xAC" "5"), (Pieces{"a", " \xE2\x82\xAC", "5"}));
  // Non-ASCII punctuation is (guillemets, U+00AB/U+00BB).
  EXPECT_EQ(split(kind, "\xC2\xABhi\xC2\xBB"), (Pieces{"\xC2\xAB", "hi", "\xC2\xBB"}));
  // Non-ASCII digits are split off but not grouped by three (Arabic-Indic).
  EXPECT_EQ(split(kind, "x\xD9\xA1\xD9\xA2\xD9\xA3\xD9\xA4"), (Pieces{"x", "\xD9\xA1\xD9\xA2\xD9\xA3\xD9\xA4"}));
  EXPECT_EQ(split(kind, "a   b"), (Pieces{"a", "  ", " b"}));
}

TEST(PreTokenizer, NamesMapToKinds) {
  const std::pair<const char*, PreTokenizerKind> cases[] = {
      {"default", PreTokenizerKind::Default},      {"gpt-2", PreTokenizerKind::Gpt2},
      {"mpt", PreTokenizerKind::Gpt2},             {"gpt-neox", PreTokenizerKind::Gpt2},
      {"llama-bpe", PreTokenizerKind::Llama3},     {"qwen2", PreTokenizerKind::Qwen2},
      {"deepseek-coder", PreTokenizerKind::DeepseekCoder}, {"deepseek-llm", PreTokenizerKind::DeepseekLlm},
      {"falcon", PreTokenizerKind::Falcon},        {"starcoder", PreTokenizerKind::Starcoder},
      {"refact", PreTokenizerKind::Starcoder},
  };
  for (const auto& [name, expected] : cases) {
    PreTokenizerKind kind{};
    EXPECT_TRUE(pre_tokenizer_from_name(name, kind)) << name;
    EXPECT_EQ(kind, expected) << name;
  }
  PreTokenizerKind kind{};
  EXPECT_FALSE(pre_tokenizer_from_name("no-such-model", kind));
}

TEST(PreTokenizer, Gpt2) {
  EXPECT_EQ(split(PreTokenizerKind::Gpt2, "Hello world"), (Pieces{"Hello", " world"}));
  EXPECT_EQ(split(PreTokenizerKind::Gpt2, "I'm  here"), (Pieces{"I", "'m", " ", " here"}));
  // Contractions are case-sensitive in GPT-2.
  EXPECT_EQ(split(PreTokenizerKind::Gpt2, "DON'T"), (Pieces{"DON", "'", "T"}));
  EXPECT_EQ(split(PreTokenizerKind::Gpt2, "x 12345!!"), (Pieces{"x", " 12345", "!!"}));
  // \s+(?!\S): the last space goes with the next word; a lone tab before a
  // letter matches nothing and stays a piece of its own.
  EXPECT_EQ(split(PreTokenizerKind::Gpt2, "a   b"), (Pieces{"a", "  ", " b"}));
  EXPECT_EQ(split(PreTokenizerKind::Gpt2, "a\t\tb"), (Pieces{"a", "\t", "\t", "b"}));
  EXPECT_EQ(split(PreTokenizerKind::Gpt2, "end   "), (Pieces{"end", "   "}));
}

TEST(PreTokenizer, WhitespaceIsUnicodeWhiteSpaceIncludingNel) {
  // U+0085 is whitespace for the reference; if it were not, the two would
  // form one [^\s\p{L}\p{N}]+ piece.
  EXPECT_EQ(split(PreTokenizerKind::Gpt2, "a\xC2\x85\xC2\x85" "b"), (Pieces{"a", "\xC2\x85", "\xC2\x85", "b"}));
  // U+3000 ideographic space likewise.
  EXPECT_EQ(split(PreTokenizerKind::Gpt2, "a\xE3\x80\x80\xE3\x80\x80"), (Pieces{"a", "\xE3\x80\x80\xE3\x80\x80"}));
}

TEST(PreTokenizer, Llama3) {
  EXPECT_EQ(split(PreTokenizerKind::Llama3, "12345"), (Pieces{"123", "45"}));
  EXPECT_EQ(split(PreTokenizerKind::Llama3, "DON'T"), (Pieces{"DON", "'T"}));
  EXPECT_EQ(split(PreTokenizerKind::Llama3, "Hello\n\nworld"), (Pieces{"Hello", "\n\n", "world"}));
  EXPECT_EQ(split(PreTokenizerKind::Llama3, "a  \n  b"), (Pieces{"a", "  \n", " ", " b"}));
  EXPECT_EQ(split(PreTokenizerKind::Llama3, "(x)"), (Pieces{"(x", ")"}));
  EXPECT_EQ(split(PreTokenizerKind::Llama3, "x ...\n\ny"), (Pieces{"x", " ...\n\n", "y"}));
}

TEST(PreTokenizer, Qwen2SplitsEveryDigit) {
  EXPECT_EQ(split(PreTokenizerKind::Qwen2, "v12345"), (Pieces{"v", "1", "2", "3", "4", "5"}));
  EXPECT_EQ(split(PreTokenizerKind::Qwen2, "it's"), (Pieces{"it", "'s"}));
}

TEST(PreTokenizer, DeepseekCoderSequence) {
  // [\r\n] first, then letter runs, punctuation runs, CJK runs, single digits.
  EXPECT_EQ(split(PreTokenizerKind::DeepseekCoder, "ab 12\ncd"), (Pieces{"ab", " ", "1", "2", "\n", "cd"}));
  EXPECT_EQ(split(PreTokenizerKind::DeepseekCoder, "it's"), (Pieces{"it", "'", "s"}));
}

TEST(PreTokenizer, StarcoderAndFalcon) {
  EXPECT_EQ(split(PreTokenizerKind::Starcoder, "x 123"), (Pieces{"x", " ", "1", "2", "3"}));
  EXPECT_EQ(split(PreTokenizerKind::Falcon, "a+=b"), (Pieces{"a", "+=", "b"}));
}

TEST(PreTokenizer, DollarMeansEndOfPieceOnly) {
  auto pre = PreTokenizer::from_patterns({"x$"});
  ASSERT_TRUE(pre.ok());
  // PCRE2's default `$` also matches before a final newline; the reference's
  // (ECMAScript) does not.
  EXPECT_EQ(pre->split("x\n").size(), 1u);
  EXPECT_EQ(pre->split("ax").size(), 2u);
}

TEST(PreTokenizer, BadPatternIsAnError) {
  auto pre = PreTokenizer::from_patterns({"(unclosed"});
  ASSERT_FALSE(pre.ok());
  EXPECT_NE(pre.error().message.find("(unclosed"), std::string::npos);
}

TEST(PreTokenizer, PiecesCoverTheText) {
  const std::string text = "Mixed 文本 with ١٢٣ digits, émoji 🦙 and\ttabs\r\n  ";
  for (const auto kind : {PreTokenizerKind::Default, PreTokenizerKind::Gpt2, PreTokenizerKind::Llama3, PreTokenizerKind::Qwen2,
                          PreTokenizerKind::DeepseekCoder, PreTokenizerKind::DeepseekLlm, PreTokenizerKind::Falcon,
                          PreTokenizerKind::Starcoder}) {
    std::string joined;
    for (const auto& p : split(kind, text)) {
      EXPECT_FALSE(p.empty());
      joined += p;
    }
    EXPECT_EQ(joined, text) << to_string(kind);
  }
}

}  // namespace
}  // namespace hearth::tokenizer

namespace hearth::tokenizer {
namespace {

TEST(PreTokenizer, DeepseekCjkRunsExcludeWhitespace) {
  // 中文 U+3000 中文: the ideographic space is not part of the CJK run.
  EXPECT_EQ(split(PreTokenizerKind::DeepseekCoder, "\xE4\xB8\xAD\xE3\x80\x80\xE4\xB8\xAD"),
            (Pieces{"\xE4\xB8\xAD", "\xE3\x80\x80", "\xE4\xB8\xAD"}));
}

}  // namespace
}  // namespace hearth::tokenizer
