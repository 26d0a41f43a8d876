#include "wpm_model.h"

#include <hearth/engine/tokenizer/utf8.h>

#include <algorithm>
#include <cstdint>

namespace hearth::tokenizer::detail {
namespace {

// Base letters of U+00C0..U+017F after canonical decomposition ('.' where
// the letter has none: Æ, Ð, Ø, Þ, ß, Đ, Ħ, Ł, Œ, ...), 16 per row.
constexpr std::string_view kLatinBase =
    "AAAAAA.CEEEEIIII"  // U+00C0
    ".NOOOOO..UUUUY.."  // U+00D0
    "aaaaaa.ceeeeiiii"  // U+00E0
    ".nooooo..uuuuy.y"  // U+00F0
    "AaAaAaCcCcCcCcDd"  // U+0100
    "..EeEeEeEeEeGgGg"  // U+0110
    "GgGgHh..IiIiIiIi"  // U+0120
    "I...JjKk.LlLlLl."  // U+0130
    "...NnNnNn...OoOo"  // U+0140
    "Oo..RrRrRrSsSsSs"  // U+0150
    "SsTtTt..UuUuUuUu"  // U+0160
    "UuUuWwYyYZzZzZz.";  // U+0170
static_assert(kLatinBase.size() == 0x180 - 0xC0);

uint32_t to_lower(uint32_t cp) {
  if (cp < 0x80) return cp >= 'A' && cp <= 'Z' ? cp + 32 : cp;
  if (cp >= 0xC0 && cp <= 0xDE && cp != 0xD7) return cp + 32;
  if (cp >= 0x100 && cp <= 0x137) return cp | 1u;
  if (cp >= 0x139 && cp <= 0x148) return cp % 2 == 1 ? cp + 1 : cp;
  if (cp >= 0x14A && cp <= 0x177) return cp | 1u;
  if (cp == 0x178) return 0xFF;
  if (cp >= 0x179 && cp <= 0x17E) return cp % 2 == 1 ? cp + 1 : cp;
  if (cp >= 0x391 && cp <= 0x3A9 && cp != 0x3A2) return cp + 32;  // Greek
  if (cp >= 0x410 && cp <= 0x42F) return cp + 32;                 // Cyrillic
  if (cp >= 0x400 && cp <= 0x40F) return cp + 80;
  return cp;
}

// Lowercased, with the accent of a decomposable Latin letter removed.
uint32_t fold(uint32_t cp) {
  if (cp >= 0xC0 && cp < 0x180) {
    const char base = kLatinBase[cp - 0xC0];
    if (base != '.') return to_lower(static_cast<uint32_t>(static_cast<unsigned char>(base)));
  }
  return to_lower(cp);
}

bool is_space(uint32_t cp) {
  return cp == ' ' || (cp >= 0x09 && cp <= 0x0D) || cp == 0x85 || cp == 0xA0 || cp == 0x1680 ||
         (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F ||
         cp == 0x3000;
}

// Combining marks (category Mn of the common blocks): what accent removal drops.
bool is_mark(uint32_t cp) {
  return (cp >= 0x300 && cp <= 0x36F) || (cp >= 0x1AB0 && cp <= 0x1AFF) || (cp >= 0x1DC0 && cp <= 0x1DFF) ||
         (cp >= 0x20D0 && cp <= 0x20FF) || (cp >= 0xFE20 && cp <= 0xFE2F);
}

// Control and format characters, NUL and U+FFFD: removed.
bool is_dropped(uint32_t cp) {
  return cp == 0 || cp == kReplacementChar || cp < 0x20 || (cp >= 0x7F && cp <= 0x9F) || cp == 0xAD ||
         (cp >= 0x200B && cp <= 0x200F) || (cp >= 0x2060 && cp <= 0x2064) || cp == 0xFEFF;
}

// ASCII symbols and punctuation count as punctuation (as BERT does), and
// the Unicode punctuation blocks.
bool is_punct(uint32_t cp) {
  if (cp < 0x80) return cp > 0x20 && cp < 0x7F && !((cp >= '0' && cp <= '9') || ((cp | 32u) >= 'a' && (cp | 32u) <= 'z'));
  return cp == 0xA1 || cp == 0xA7 || cp == 0xAB || cp == 0xB6 || cp == 0xB7 || cp == 0xBB || cp == 0xBF ||
         (cp >= 0x2010 && cp <= 0x2027) || (cp >= 0x2030 && cp <= 0x205E) || (cp >= 0x3001 && cp <= 0x303F) ||
         (cp >= 0xFF01 && cp <= 0xFF0F) || (cp >= 0xFF1A && cp <= 0xFF20) || (cp >= 0xFF3B && cp <= 0xFF40) ||
         (cp >= 0xFF5B && cp <= 0xFF65);
}

// CJK ideographs are words of their own.
bool is_cjk(uint32_t cp) {
  return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) || (cp >= 0x20000 && cp <= 0x2A6DF) ||
         (cp >= 0x2A700 && cp <= 0x2CEAF) || (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}

}  // namespace

std::vector<std::string> wpm_words(std::string_view text) {
  std::vector<std::string> words;
  std::string word;
  auto flush = [&] {
    if (!word.empty()) words.push_back(std::move(word));
    word.clear();
  };
  for (const uint32_t cp : decode_utf8_lenient(text)) {
    if (is_space(cp)) {
      flush();
    } else if (is_mark(cp) || is_dropped(cp)) {
      continue;
    } else if (is_punct(cp) || is_cjk(cp)) {
      flush();
      append_utf8(fold(cp), word);
      flush();
    } else {
      append_utf8(fold(cp), word);
    }
  }
  flush();
  return words;
}

size_t wpm_max_piece_bytes(const Vocabulary& vocab) {
  size_t longest = 0;
  for (const TokenData& t : vocab.tokens) longest = std::max(longest, t.text.size());
  return longest;
}

void wpm_tokenize(const Vocabulary& vocab, size_t max_piece_bytes, std::string_view text, std::vector<TokenId>& out) {
  std::string marked;
  for (const std::string& w : wpm_words(text)) {
    marked = "\xE2\x96\x81";  // U+2581: the word-start spelling
    marked += w;
    const size_t first = out.size();
    bool matched = true;
    for (size_t i = 0; i < marked.size() && matched;) {
      matched = false;
      // Longest piece first; the first piece must include the marker.
      for (size_t j = std::min(marked.size(), i + max_piece_bytes); j > (i == 0 ? size_t{3} : i); --j) {
        const TokenId id = vocab.find(std::string_view(marked).substr(i, j - i));
        if (id != kNoToken) {
          out.push_back(id);
          i = j;
          matched = true;
          break;
        }
      }
    }
    if (!matched) {
      out.resize(first);
      if (vocab.special.unk != kNoToken) out.push_back(vocab.special.unk);
    }
  }
}

}  // namespace hearth::tokenizer::detail
