#include <hearth/engine/tokenizer/utf8.h>

#include <gtest/gtest.h>

#include <set>

namespace hearth::tokenizer {
namespace {

using Cps = std::vector<uint32_t>;

TEST(Utf8, DecodesValidSequences) {
  EXPECT_EQ(decode_utf8_lenient("a\xC3\xA9\xE4\xB8\xAD\xF0\x9F\xA6\x99"), (Cps{'a', 0xE9, 0x4E2D, 0x1F999}));
}

TEST(Utf8, InvalidBytesBecomeReplacementOneByteAtATime) {
  // A stray continuation byte, a truncated sequence, an impossible lead byte.
  EXPECT_EQ(decode_utf8_lenient("\x80"), (Cps{0xFFFD}));
  EXPECT_EQ(decode_utf8_lenient("\xE4\xB8"), (Cps{0xFFFD, 0xFFFD}));
  EXPECT_EQ(decode_utf8_lenient("\xFFx"), (Cps{0xFFFD, 'x'}));
  // A lead byte followed by a non-continuation byte loses only itself.
  EXPECT_EQ(decode_utf8_lenient("\xC3x"), (Cps{0xFFFD, 'x'}));
}

TEST(Utf8, LenientLikeTheReferenceForOverlongAndSurrogates) {
  EXPECT_EQ(decode_utf8_lenient(std::string("\xC0\x80", 2)), (Cps{0}));
  EXPECT_EQ(decode_utf8_lenient("\xED\xA0\x80"), (Cps{0xD800}));
}

TEST(Utf8, LeadByteLengths) {
  EXPECT_EQ(utf8_len_from_lead('a'), 1u);
  EXPECT_EQ(utf8_len_from_lead(0x80), 1u);
  EXPECT_EQ(utf8_len_from_lead(0xC3), 2u);
  EXPECT_EQ(utf8_len_from_lead(0xE4), 3u);
  EXPECT_EQ(utf8_len_from_lead(0xF0), 4u);
}

TEST(Utf8, CompletePrefixHoldsBackOnlyUnfinishedValidSequences) {
  EXPECT_EQ(utf8_complete_prefix("abc"), 3u);
  EXPECT_EQ(utf8_complete_prefix("a\xE4\xB8"), 1u);       // 中 missing its last byte
  EXPECT_EQ(utf8_complete_prefix("a\xF0\x9F\xA6"), 1u);   // 🦙 missing its last byte
  EXPECT_EQ(utf8_complete_prefix("a\xE4\xB8\xAD"), 4u);
  EXPECT_EQ(utf8_complete_prefix("\xFF"), 1u);            // can never complete
  EXPECT_EQ(utf8_complete_prefix("\xE4x"), 2u);           // broken: released
  EXPECT_EQ(utf8_complete_prefix("\xED\xA0"), 2u);        // would be a surrogate
}

TEST(Utf8, SanitizeReplacesInvalid) {
  EXPECT_EQ(utf8_sanitize("a\xFF" "b"), "a\xEF\xBF\xBD" "b");
  EXPECT_EQ(utf8_sanitize("\xE4\xB8\xAD"), "\xE4\xB8\xAD");
  EXPECT_TRUE(utf8_valid("\xE4\xB8\xAD"));
  EXPECT_FALSE(utf8_valid("\xC0\x80"));
  EXPECT_FALSE(utf8_valid("\xED\xA0\x80"));
}

TEST(Utf8, AppendEncodes) {
  std::string s;
  append_utf8(0x1F999, s);
  append_utf8(0x110000, s);  // out of range -> U+FFFD
  EXPECT_EQ(s, "\xF0\x9F\xA6\x99\xEF\xBF\xBD");
}

// GPT-2's published table: printable bytes map to themselves, space to 'Ġ'
// (U+0120), newline to 'Ċ' (U+010A), soft hyphen 0xAD to 'Ń' (U+0143).
TEST(Utf8, Gpt2ByteTable) {
  const auto& t = gpt2_byte_to_codepoint();
  EXPECT_EQ(t['a'], uint32_t('a'));
  EXPECT_EQ(t[' '], 0x120u);
  EXPECT_EQ(t['\n'], 0x10Au);
  EXPECT_EQ(t[0], 0x100u);
  EXPECT_EQ(t[0xAD], 0x143u);
  EXPECT_EQ(t[0xFF], 0xFFu);
  std::set<uint32_t> distinct(t.begin(), t.end());
  EXPECT_EQ(distinct.size(), 256u);
  for (int b = 0; b < 256; ++b) EXPECT_EQ(gpt2_codepoint_to_byte(t[static_cast<size_t>(b)]), b);
  EXPECT_EQ(gpt2_codepoint_to_byte(0x20), -1);
  EXPECT_EQ(gpt2_codepoint_to_byte(0x4E2D), -1);
}

}  // namespace
}  // namespace hearth::tokenizer
