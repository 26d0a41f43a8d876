// UTF-8 helpers with the reference engine's exact leniency rules, and the
// GPT-2 byte <-> unicode mapping used by byte-level BPE vocabularies.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace hearth::tokenizer {

inline constexpr uint32_t kReplacementChar = 0xFFFD;

// Length of the sequence a lead byte announces, judged by its top four bits
// only (1 for ASCII and for stray continuation bytes, 2, 3 or 4), as the
// reference's SentencePiece and BPE symbol splitting does.
inline size_t utf8_len_from_lead(uint8_t lead) {
  static constexpr std::array<uint8_t, 16> kLengths = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};
  return kLengths[lead >> 4];
}

// Decodes like the reference: a lead byte with the right number of
// continuation bytes is accepted (overlong forms and surrogates included);
// anything else becomes U+FFFD and consumes one byte.
std::vector<uint32_t> decode_utf8_lenient(std::string_view text);

// Appends the UTF-8 form of `cp` (surrogates are encoded as three bytes like
// any other BMP value; values above 0x10FFFF become U+FFFD).
void append_utf8(uint32_t cp, std::string& out);

// Length of the longest prefix of `bytes` that ends on a sequence boundary
// and is followed only by the start of an unfinished, still-valid sequence.
// Bytes that can never complete count as part of the prefix.
size_t utf8_complete_prefix(std::string_view bytes);

// Replaces every invalid sequence with U+FFFD (strict: no overlongs, no
// surrogates, nothing above U+10FFFF).
std::string utf8_sanitize(std::string_view bytes);
bool utf8_valid(std::string_view bytes);

// GPT-2's reversible byte -> printable code point table: printable Latin-1
// bytes map to themselves, the other 68 bytes to U+0100 onwards.
const std::array<uint32_t, 256>& gpt2_byte_to_codepoint();
// The inverse, or -1 when `cp` is not one of the 256 byte symbols.
int gpt2_codepoint_to_byte(uint32_t cp);

}  // namespace hearth::tokenizer
