// UTF-8 helpers for the template interpreter: Python strings index, slice,
// strip and change case by code point, not by byte.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace hearth::chat {

void append_utf8(std::string& out, uint32_t cp);
// Invalid bytes decode to U+FFFD, so any byte string can be processed.
std::vector<uint32_t> decode_utf8(std::string_view s);
std::string encode_utf8(const std::vector<uint32_t>& cps, size_t begin, size_t end);
size_t count_code_points(std::string_view s);
bool is_ascii(std::string_view s);

// Python's str.isspace() set.
bool is_unicode_space(uint32_t cp);
uint32_t to_upper_cp(uint32_t cp);
uint32_t to_lower_cp(uint32_t cp);
bool is_alnum_cp(uint32_t cp);

enum class StripSide { Both, Left, Right };
// str.strip(): Unicode whitespace, or the given characters when chars is set.
std::string strip_text(std::string_view s, StripSide side, const std::string* chars = nullptr);
std::string upper_text(std::string_view s);
std::string lower_text(std::string_view s);

}  // namespace hearth::chat
