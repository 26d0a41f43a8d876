// The algorithms on small hand-made vocabularies, with expectations worked
// out by hand from the reference's rules.
#include <hearth/engine/tokenizer/stream_decoder.h>
#include <hearth/engine/tokenizer/tokenizer.h>

#include <gtest/gtest.h>

#include <cstdio>

namespace hearth::tokenizer {
namespace {

constexpr const char* kSpace = "\xE2\x96\x81";  // U+2581

struct ToyBuilder {
  Vocabulary v;
  TokenId add(std::string text, float score = 0.0f, TokenAttr attr = TokenAttr::Normal) {
    v.tokens.push_back(TokenData{std::move(text), score, attr});
    return static_cast<TokenId>(v.tokens.size() - 1);
  }
};

Tokenizer make(Vocabulary v) {
  auto t = Tokenizer::create(std::move(v));
  EXPECT_TRUE(t.ok()) << (t.ok() ? "" : t.error().message);
  return std::move(t).value();
}

// ---- SentencePiece --------------------------------------------------------

struct SpmToy {
  ToyBuilder b;
  TokenId unk, bos, eos, sp, a, bb, ab, sp_a, sp_ab, aa, ctl;
  TokenId byte_e4, byte_b8, byte_ad;
  SpmToy() {
    unk = b.add("<unk>", 0, TokenAttr::Unknown);
    bos = b.add("<s>", 0, TokenAttr::Control);
    eos = b.add("</s>", 0, TokenAttr::Control);
    sp = b.add(kSpace, -5);
    a = b.add("a", -3);
    bb = b.add("b", -3);
    ab = b.add("ab", -1);
    sp_a = b.add(std::string(kSpace) + "a", -2);
    sp_ab = b.add(std::string(kSpace) + "ab", -0.5f);
    aa = b.add("aa", -1);
    ctl = b.add("<|ctl|>", 0, TokenAttr::Control);
    byte_e4 = b.add("<0xE4>", 0, TokenAttr::Byte);
    byte_b8 = b.add("<0xB8>", 0, TokenAttr::Byte);
    byte_ad = b.add("<0xAD>", 0, TokenAttr::Byte);
    b.v.kind = VocabKind::SentencePiece;
    b.v.special.bos = bos;
    b.v.special.eos = eos;
    b.v.special.unk = unk;
    b.v.add_bos = true;
    b.v.add_space_prefix = true;
  }
};

TEST(SpmToy, HighestScoreMergesFirst) {
  SpmToy t;
  const Tokenizer tok = make(t.b.v);
  // "▁ab": pairs ▁a (-2) and ab (-1); ab wins, then ▁+ab = ▁ab (-0.5).
  EXPECT_EQ(tok.tokenize("ab"), (std::vector<TokenId>{t.bos, t.sp_ab}));
  EXPECT_EQ(tok.tokenize("ab", AddSpecial::No), (std::vector<TokenId>{t.sp_ab}));
}

TEST(SpmToy, TiesGoToTheLeftmostPair) {
  SpmToy t;
  const Tokenizer tok = make(t.b.v);
  // "▁aaa": ▁a (-2), aa at 1 (-1), aa at 2 (-1): the left aa merges; "▁aa"
  // and "aaa" are no tokens, so ▁ | aa | a.
  EXPECT_EQ(tok.tokenize("aaa", AddSpecial::No), (std::vector<TokenId>{t.sp, t.aa, t.a}));
}

TEST(SpmToy, UnknownCharactersFallBackToBytes) {
  SpmToy t;
  const Tokenizer tok = make(t.b.v);
  EXPECT_EQ(tok.tokenize("\xE4\xB8\xAD", AddSpecial::No), (std::vector<TokenId>{t.sp, t.byte_e4, t.byte_b8, t.byte_ad}));
  // Bytes with no byte token and no single-character token become <unk>.
  EXPECT_EQ(tok.tokenize("z", AddSpecial::No), (std::vector<TokenId>{t.sp, t.unk}));
}

TEST(SpmToy, SpacePrefixFollowsSpecialTokens) {
  SpmToy t;
  const Tokenizer tok = make(t.b.v);
  // Parsed control token: the text after it gets a fresh space prefix.
  EXPECT_EQ(tok.tokenize("a<|ctl|>ab", AddSpecial::No, ParseSpecial::Yes),
            (std::vector<TokenId>{t.sp_a, t.ctl, t.sp_ab}));
  // Not parsed: '<', '|', ... are unknown here and become <unk>.
  const auto plain = tok.tokenize("<|ctl|>", AddSpecial::No, ParseSpecial::No);
  EXPECT_EQ(std::count(plain.begin(), plain.end(), t.ctl), 0);
}

TEST(SpmToy, DetokenizeHandlesPrefixBytesAndControl) {
  SpmToy t;
  const Tokenizer tok = make(t.b.v);
  const std::vector<TokenId> ids = {t.sp_ab, t.sp_a, t.byte_e4, t.byte_b8, t.byte_ad, t.ctl};
  EXPECT_EQ(tok.detokenize(ids), "ab a\xE4\xB8\xAD");
  DetokenizeOptions show;
  show.show_special = ShowSpecial::Yes;
  EXPECT_EQ(tok.detokenize(ids, show), "ab a\xE4\xB8\xAD<|ctl|>");
  EXPECT_EQ(tok.token_to_piece(t.sp_ab), " ab");
  EXPECT_EQ(tok.token_to_piece(t.sp_ab, ShowSpecial::No, 1), "ab");
  EXPECT_EQ(tok.token_to_piece(9999), "");
}

// ---- byte-level BPE -------------------------------------------------------

struct BpeToy {
  ToyBuilder b;
  TokenId ta, tb, tc, tsp, tab, tsp_a, tabc, teot, tuser;
  BpeToy() {
    ta = b.add("a");
    tb = b.add("b");
    tc = b.add("c");
    tsp = b.add("\xC4\xA0");  // 'Ġ' = byte 0x20
    tab = b.add("ab");
    tsp_a = b.add("\xC4\xA0" "a");
    tabc = b.add("abc");
    teot = b.add("<|eot|>", 0, TokenAttr::Control);
    tuser = b.add("<u>", 0, TokenAttr::UserDefined);
    b.v.kind = VocabKind::BytePairBpe;
    b.v.pre = PreTokenizerKind::Gpt2;
    b.v.merges = {{"a", "b"}, {"\xC4\xA0", "a"}, {"ab", "c"}};
    b.v.clean_spaces = true;
  }
};

TEST(BpeToy, LowestRankMergesFirst) {
  BpeToy t;
  const Tokenizer tok = make(t.b.v);
  EXPECT_EQ(tok.tokenize("abc"), (std::vector<TokenId>{t.tabc}));
  // " ab": Ġa (rank 1) and ab (rank 0): ab first, then Ġ+ab is no merge.
  EXPECT_EQ(tok.tokenize(" ab"), (std::vector<TokenId>{t.tsp, t.tab}));
  EXPECT_EQ(tok.tokenize(" a"), (std::vector<TokenId>{t.tsp_a}));
}

TEST(BpeToy, MergeThroughTextThatIsNotAToken) {
  BpeToy t;
  // "bc" is not a token, but a merge produces it and a later merge uses it.
  t.b.v.merges = {{"b", "c"}, {"a", "bc"}};
  const Tokenizer tok = make(t.b.v);
  EXPECT_EQ(tok.tokenize("abc"), (std::vector<TokenId>{t.tabc}));
  // Left as "bc", a non-token: spelled as its one-byte tokens.
  EXPECT_EQ(tok.tokenize("bc"), (std::vector<TokenId>{t.tb, t.tc}));
}

TEST(BpeToy, ControlTextOnlyWithParseSpecialUserDefinedAlways) {
  BpeToy t;
  const Tokenizer tok = make(t.b.v);
  const auto plain = tok.tokenize("a<|eot|>b", AddSpecial::No, ParseSpecial::No);
  EXPECT_EQ(std::count(plain.begin(), plain.end(), t.teot), 0);
  EXPECT_EQ(tok.tokenize("a<|eot|>b", AddSpecial::No, ParseSpecial::Yes),
            (std::vector<TokenId>{t.ta, t.teot, t.tb}));
  EXPECT_EQ(tok.tokenize("a<u>b", AddSpecial::No, ParseSpecial::No), (std::vector<TokenId>{t.ta, t.tuser, t.tb}));
}

TEST(BpeToy, StripAttributesSwallowAdjacentWhitespace) {
  BpeToy t;
  t.b.v.tokens[static_cast<size_t>(t.tuser)].attr = TokenAttr::UserDefined | TokenAttr::LStrip | TokenAttr::RStrip;
  const Tokenizer tok = make(t.b.v);
  EXPECT_EQ(tok.tokenize("a  <u> \n b"), (std::vector<TokenId>{t.ta, t.tuser, t.tb}));
}

TEST(BpeToy, DetokenizeDecodesBytesAndCleansSpaces) {
  BpeToy t;
  const Tokenizer tok = make(t.b.v);
  EXPECT_EQ(tok.token_to_piece(t.tsp_a), " a");
  // clean_spaces: " ," loses its space; with SpaceCleanup::None it stays.
  ToyBuilder& b = t.b;
  const TokenId comma = b.add(",");
  const Tokenizer tok2 = make(b.v);
  const std::vector<TokenId> ids = {t.ta, t.tsp, comma, t.tsp_a};
  EXPECT_EQ(tok2.detokenize(ids), "a, a");
  DetokenizeOptions raw;
  raw.cleanup = SpaceCleanup::None;
  EXPECT_EQ(tok2.detokenize(ids, raw), "a , a");
}

TEST(BpeToy, CleanSpacesRules) {
  ToyBuilder b;
  b.v.kind = VocabKind::BytePairBpe;
  b.v.clean_spaces = true;
  // One token per printable ASCII character, spaces as Ġ.
  std::vector<TokenId> by_char(128, kNoToken);
  for (int c = 0x21; c < 0x7F; ++c) by_char[static_cast<size_t>(c)] = b.add(std::string(1, static_cast<char>(c)));
  by_char[' '] = b.add("\xC4\xA0");
  const Tokenizer tok = make(b.v);
  auto ids_of = [&](std::string_view s) {
    std::vector<TokenId> ids;
    for (const char c : s) ids.push_back(by_char[static_cast<size_t>(c)]);
    return ids;
  };
  EXPECT_EQ(tok.detokenize(ids_of("Hi , there ! ok ? yes .")), "Hi, there! ok? yes.");
  EXPECT_EQ(tok.detokenize(ids_of("a ' b")), "a'b");
  EXPECT_EQ(tok.detokenize(ids_of("it 's I 'm we 're they 've")), "it's I'm we're they've");
  // " 't", " 'd" and " 'll" keep their space in the reference.
  EXPECT_EQ(tok.detokenize(ids_of("don 't I 'd we 'll")), "don 't I 'd we 'll");
}

// ---- vocabulary validation ------------------------------------------------

TEST(VocabValidation, SpecialIdOutsideVocabularyIsAnError) {
  BpeToy t;
  t.b.v.special.eos = 99;
  auto tok = Tokenizer::create(t.b.v);
  ASSERT_FALSE(tok.ok());
  EXPECT_NE(tok.error().message.find("eos"), std::string::npos);
  EXPECT_NE(tok.error().message.find("99"), std::string::npos);
}

TEST(VocabValidation, EmptyVocabularyIsAnError) {
  Vocabulary v;
  EXPECT_FALSE(Tokenizer::create(v).ok());
}

TEST(VocabValidation, WellKnownEndMarkersBecomeControlAndEog) {
  BpeToy t;
  const TokenId im_end = t.b.add("<|im_end|>", 0, TokenAttr::UserDefined);
  const Tokenizer tok = make(t.b.v);
  EXPECT_TRUE(has_any(tok.vocab().attr(im_end), TokenAttr::Control));
  EXPECT_TRUE(tok.vocab().is_eog(im_end));
  EXPECT_EQ(tok.vocab().special.eot, im_end);
  // Being control now, user text no longer turns into it.
  const auto ids = tok.tokenize("<|im_end|>", AddSpecial::No, ParseSpecial::No);
  EXPECT_EQ(std::count(ids.begin(), ids.end(), im_end), 0);
}

// ---- streaming ------------------------------------------------------------

TEST(StreamDecoder, HoldsBackPartialCharacters) {
  SpmToy t;
  const Tokenizer tok = make(t.b.v);
  StreamDecoder dec(tok);
  EXPECT_EQ(dec.push(t.sp_a), " a");
  EXPECT_EQ(dec.push(t.byte_e4), "");
  EXPECT_EQ(dec.pending(), 1u);
  EXPECT_EQ(dec.push(t.byte_b8), "");
  EXPECT_EQ(dec.push(t.ctl), "");  // hidden control token: nothing, still waiting
  EXPECT_EQ(dec.push(t.byte_ad), "\xE4\xB8\xAD");
  EXPECT_EQ(dec.pending(), 0u);
}

TEST(StreamDecoder, BrokenSequencesAreReplacedNotHeldForever) {
  SpmToy t;
  const Tokenizer tok = make(t.b.v);
  StreamDecoder dec(tok);
  EXPECT_EQ(dec.push(t.byte_e4), "");
  // 'a' cannot continue 中's bytes: the stray lead byte is released as U+FFFD.
  EXPECT_EQ(dec.push(t.a), "\xEF\xBF\xBD" "a");
  EXPECT_EQ(dec.push(t.byte_e4), "");
  EXPECT_EQ(dec.flush(), "\xEF\xBF\xBD");
}

TEST(StreamDecoder, LeadingSpaceOptions) {
  SpmToy t;
  const Tokenizer tok = make(t.b.v);
  StreamDecoder keep(tok, ShowSpecial::No, LeadingSpace::Keep);
  EXPECT_EQ(keep.push(t.sp_ab), " ab");
  StreamDecoder strip(tok, ShowSpecial::No, LeadingSpace::StripFirst);
  EXPECT_EQ(strip.push(t.sp_ab), "ab");
  EXPECT_EQ(strip.push(t.sp_ab), " ab");
  StreamDecoder show(tok, ShowSpecial::Yes);
  EXPECT_EQ(show.push(t.ctl), "<|ctl|>");
}

}  // namespace
}  // namespace hearth::tokenizer
