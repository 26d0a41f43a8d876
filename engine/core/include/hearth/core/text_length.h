// How long a text is to a person: characters (UTF-8 sequences), not bytes,
// so a message in another script is not "longer" than the same message in
// English. Invalid bytes count as one character each.
#pragma once

#include <cstddef>
#include <string_view>

namespace hearth {

inline size_t character_count(std::string_view utf8) {
  size_t n = 0;
  for (unsigned char c : utf8) n += (c & 0xC0) != 0x80;
  return n;
}

}  // namespace hearth
