// UTF-8 validity check for keys and names read from files.
#pragma once

#include <string_view>

namespace hearth::gguf {

// True when `text` is well-formed UTF-8 (no overlongs, no surrogates, <= U+10FFFF).
bool is_valid_utf8(std::string_view text);

}  // namespace hearth::gguf
