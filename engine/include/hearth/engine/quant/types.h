// Tensor element types and their block layouts, numbered as in GGUF files.
// The traits table in types.cpp is the one place that says how big each
// block is; everything that sizes tensors goes through it.
#pragma once

#include <hearth/core/result.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace hearth {

// Type ids as stored in GGUF tensor infos. Ids that are absent are either
// removed upstream or not supported by Hearth.
enum class DType : uint32_t {
  F32 = 0,
  F16 = 1,
  Q4_0 = 2,
  Q4_1 = 3,
  Q5_0 = 6,
  Q5_1 = 7,
  Q8_0 = 8,
  Q8_1 = 9,
  Q2_K = 10,
  Q3_K = 11,
  Q4_K = 12,
  Q5_K = 13,
  Q6_K = 14,
  Q8_K = 15,
  IQ4_NL = 20,
  IQ4_XS = 23,
  I8 = 24,
  I16 = 25,
  I32 = 26,
  I64 = 27,
  F64 = 28,
  BF16 = 30,
  MXFP4 = 39,
};

struct DTypeTraits {
  DType type;
  std::string_view name;     // "Q4_K", as the reference spells it
  int64_t block_elements;    // elements per block (1 for plain types)
  size_t block_bytes;        // bytes per block
  bool quantized;            // block format rather than plain numbers
};

// Traits of a type id read from a file, or nullopt when Hearth does not know it.
std::optional<DTypeTraits> dtype_traits(uint32_t type_id);
const DTypeTraits& traits(DType type);
std::optional<DType> dtype_from_name(std::string_view name);  // case-insensitive

// Bytes needed for `elements` values of `type`; an error when `elements` is not
// a multiple of the block size or the size overflows.
Result<uint64_t> row_bytes(DType type, int64_t elements);

}  // namespace hearth
