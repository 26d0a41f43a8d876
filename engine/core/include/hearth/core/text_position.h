// Where in a text a parser stopped, in the words error messages use:
// "byte 17 (line 2, column 5)". Lines and columns count from 1, columns in
// bytes, so the position matches what an editor's byte offset shows.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>

namespace hearth {

inline std::string text_position(std::string_view text, uint64_t offset) {
  const size_t end = static_cast<size_t>(std::min<uint64_t>(offset, text.size()));
  uint64_t line = 1;
  size_t line_start = 0;
  for (size_t i = 0; i < end; ++i) {
    if (text[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  }
  return fmt::format("byte {} (line {}, column {})", offset, line, end - line_start + 1);
}

// nlohmann::json's parse_error text without its "[json.exception...] parse
// error at line L, column C: " prefix (text_position says where).
inline std::string json_error_reason(std::string_view what) {
  const size_t at = what.find(": ");
  return std::string(at == std::string_view::npos ? what : what.substr(at + 2));
}

}  // namespace hearth
