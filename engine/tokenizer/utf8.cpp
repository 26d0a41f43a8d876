#include <hearth/engine/tokenizer/utf8.h>

namespace hearth::tokenizer {

namespace {

bool is_continuation(uint8_t b) { return (b & 0xC0) == 0x80; }

// Strict decoding of one sequence at `pos`; returns its length, or 0 when
// the bytes there are invalid, or -1 when they are a valid but unfinished
// prefix cut by the end of the input.
int strict_sequence_length(std::string_view s, size_t pos) {
  const auto b0 = static_cast<uint8_t>(s[pos]);
  if (b0 < 0x80) return 1;
  int need;
  uint8_t lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    need = 1;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    need = 2;
    if (b0 == 0xE0) lo = 0xA0;  // no overlongs
    if (b0 == 0xED) hi = 0x9F;  // no surrogates
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    need = 3;
    if (b0 == 0xF0) lo = 0x90;
    if (b0 == 0xF4) hi = 0x8F;  // nothing above U+10FFFF
  } else {
    return 0;
  }
  for (int i = 1; i <= need; ++i) {
    if (pos + static_cast<size_t>(i) >= s.size()) return -1;
    const auto b = static_cast<uint8_t>(s[pos + static_cast<size_t>(i)]);
    if (i == 1 ? (b < lo || b > hi) : !is_continuation(b)) return 0;
  }
  return need + 1;
}

}  // namespace

std::vector<uint32_t> decode_utf8_lenient(std::string_view text) {
  std::vector<uint32_t> out;
  out.reserve(text.size());
  size_t i = 0;
  const size_t n = text.size();
  auto byte = [&](size_t k) { return static_cast<uint8_t>(text[k]); };
  while (i < n) {
    const uint8_t b0 = byte(i);
    if (b0 < 0x80) {
      out.push_back(b0);
      i += 1;
    } else if ((b0 & 0x40) == 0) {  // stray continuation byte
      out.push_back(kReplacementChar);
      i += 1;
    } else if ((b0 & 0x20) == 0) {
      if (i + 1 < n && is_continuation(byte(i + 1))) {
        out.push_back((uint32_t(b0 & 0x1F) << 6) | (byte(i + 1) & 0x3F));
        i += 2;
      } else {
        out.push_back(kReplacementChar);
        i += 1;
      }
    } else if ((b0 & 0x10) == 0) {
      if (i + 2 < n && is_continuation(byte(i + 1)) && is_continuation(byte(i + 2))) {
        out.push_back((uint32_t(b0 & 0x0F) << 12) | (uint32_t(byte(i + 1) & 0x3F) << 6) | (byte(i + 2) & 0x3F));
        i += 3;
      } else {
        out.push_back(kReplacementChar);
        i += 1;
      }
    } else if ((b0 & 0x08) == 0) {
      if (i + 3 < n && is_continuation(byte(i + 1)) && is_continuation(byte(i + 2)) &&
          is_continuation(byte(i + 3))) {
        out.push_back((uint32_t(b0 & 0x07) << 18) | (uint32_t(byte(i + 1) & 0x3F) << 12) |
                      (uint32_t(byte(i + 2) & 0x3F) << 6) | (byte(i + 3) & 0x3F));
        i += 4;
      } else {
        out.push_back(kReplacementChar);
        i += 1;
      }
    } else {
      out.push_back(kReplacementChar);
      i += 1;
    }
  }
  return out;
}

void append_utf8(uint32_t cp, std::string& out) {
  if (cp > 0x10FFFF) cp = kReplacementChar;
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

size_t utf8_complete_prefix(std::string_view bytes) {
  size_t i = 0;
  while (i < bytes.size()) {
    const int len = strict_sequence_length(bytes, i);
    if (len < 0) return i;  // an unfinished but possibly valid sequence: hold it back
    i += len == 0 ? 1 : static_cast<size_t>(len);
  }
  return i;
}

std::string utf8_sanitize(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  size_t i = 0;
  while (i < bytes.size()) {
    const int len = strict_sequence_length(bytes, i);
    if (len > 0) {
      out.append(bytes.substr(i, static_cast<size_t>(len)));
      i += static_cast<size_t>(len);
    } else {
      append_utf8(kReplacementChar, out);
      i += 1;
    }
  }
  return out;
}

bool utf8_valid(std::string_view bytes) {
  size_t i = 0;
  while (i < bytes.size()) {
    const int len = strict_sequence_length(bytes, i);
    if (len <= 0) return false;
    i += static_cast<size_t>(len);
  }
  return true;
}

const std::array<uint32_t, 256>& gpt2_byte_to_codepoint() {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    uint32_t next = 256;
    for (uint32_t b = 0; b < 256; ++b) {
      const bool printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
      t[b] = printable ? b : next++;
    }
    return t;
  }();
  return table;
}

int gpt2_codepoint_to_byte(uint32_t cp) {
  if (cp >= 0x21 && cp <= 0x7E) return static_cast<int>(cp);
  if ((cp >= 0xA1 && cp <= 0xAC) || (cp >= 0xAE && cp <= 0xFF)) return static_cast<int>(cp);
  if (cp < 256 || cp >= 256 + 68) return -1;
  static const std::array<int16_t, 68> inverse = [] {
    std::array<int16_t, 68> inv{};
    const auto& fwd = gpt2_byte_to_codepoint();
    for (int b = 0; b < 256; ++b) {
      if (fwd[static_cast<size_t>(b)] >= 256) inv[fwd[static_cast<size_t>(b)] - 256] = static_cast<int16_t>(b);
    }
    return inv;
  }();
  return inverse[cp - 256];
}

}  // namespace hearth::tokenizer
