// Deterministic mixed English / source code / CJK text for benchmarks and
// fuzz-style tests: words drawn from small lists and random CJK runs, so the
// text is varied enough that a word cache does not see only repeats.
#pragma once

#include <cstdint>
#include <random>
#include <string>

namespace hearth::tokenizer::testing {

inline void append_cp(uint32_t cp, std::string& out) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

inline std::string mixed_text(size_t bytes, uint32_t seed) {
  static const char* kWords[] = {
      "the", "quick", "brown", "fox", "jumps", "over", "lazy", "dog", "model", "token", "cache", "memory",
      "language", "machine", "running", "locally", "private", "offline", "conversation", "answer", "question",
      "because", "however", "therefore", "although", "implementation", "performance", "measurement", "It's",
      "don't", "we'll", "they're", "I've", "Hello", "World", "über", "naïve", "café", "résumé", "Привет", "мир"};
  static const char* kCode[] = {
      "for (int i = 0; i < n; ++i) {", "  sum += values[i] * weights[i];", "}", "return std::move(result);",
      "def forward(self, x):", "    return self.proj(x) + x", "if (!status.ok()) return status.take_error();",
      "const auto it = table.find(key);", "x = [i ** 2 for i in range(10)]", "#include <vector>",
      "  // comment: keep the cache warm", "fn main() { println!(\"{}\", 42); }"};
  std::mt19937 rng(seed);
  std::string out;
  out.reserve(bytes + 256);
  while (out.size() < bytes) {
    const uint32_t kind = rng() % 3;
    if (kind == 0) {  // an English sentence
      const int n = 5 + static_cast<int>(rng() % 15);
      for (int i = 0; i < n; ++i) {
        if (i > 0) out += ' ';
        out += kWords[rng() % std::size(kWords)];
        if (rng() % 10 == 0) out += std::to_string(rng() % 100000);
      }
      out += (rng() % 4 == 0) ? "?\n" : ". ";
    } else if (kind == 1) {  // a few lines of code
      const int n = 1 + static_cast<int>(rng() % 4);
      for (int i = 0; i < n; ++i) {
        out += kCode[rng() % std::size(kCode)];
        out += '\n';
      }
    } else {  // a CJK sentence: hanzi, kana or hangul runs
      const int n = 5 + static_cast<int>(rng() % 30);
      for (int i = 0; i < n; ++i) {
        const uint32_t script = rng() % 10;
        uint32_t cp;
        if (script < 6) cp = 0x4E00 + rng() % 0x1000;       // common hanzi
        else if (script < 8) cp = 0x3041 + rng() % 0x56;    // hiragana
        else if (script < 9) cp = 0xAC00 + rng() % 0x400;   // hangul syllables
        else cp = (rng() % 2) ? 0x3001 : 0xFF0C;            // 、 or ，
        append_cp(cp, out);
      }
      append_cp(0x3002, out);  // 。
    }
  }
  return out;
}

}  // namespace hearth::tokenizer::testing
