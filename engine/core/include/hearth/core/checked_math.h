// Overflow-checked arithmetic for sizes read from untrusted files.
#pragma once

#include <cstdint>
#include <optional>

namespace hearth {

inline std::optional<uint64_t> checked_add(uint64_t a, uint64_t b) {
  uint64_t r;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}

inline std::optional<uint64_t> checked_mul(uint64_t a, uint64_t b) {
  uint64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

// Rounds `value` up to a multiple of `alignment` (> 0), or nullopt on overflow.
inline std::optional<uint64_t> checked_align_up(uint64_t value, uint64_t alignment) {
  const uint64_t rem = value % alignment;
  if (rem == 0) return value;
  return checked_add(value, alignment - rem);
}

}  // namespace hearth
