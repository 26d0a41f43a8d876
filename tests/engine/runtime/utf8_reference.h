// The tests' own account of how streamed text arrives: every byte that starts
// no valid UTF-8 sequence becomes U+FFFD (whole characters only). Written
// independently of the engine's StreamDecoder, which it checks.
#pragma once

#include <string>

namespace hearth::testing {

inline std::string valid_utf8(const std::string& text) {
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    const size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    bool ok = len > 0 && i + len <= text.size();
    for (size_t k = 1; ok && k < len; ++k) ok = (static_cast<unsigned char>(text[i + k]) & 0xC0) == 0x80;
    if (ok) {
      out.append(text, i, len);
      i += len;
    } else {
      out.append("\xEF\xBF\xBD");
      ++i;
    }
  }
  return out;
}

}  // namespace hearth::testing
