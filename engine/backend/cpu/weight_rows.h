// Row-level access to weights of every supported type: the seam between the
// CPU backend and the block formats of hearth_quant (reference conversions
// here; the SIMD kernel table is used by the matrix products).
#pragma once

#include <hearth/engine/quant/types.h>

#include <cstdint>

namespace hearth::backend::cpu {

// Whether rows of `type` can be converted to floats.
bool has_row_ops(DType type);
// Writes the `n` values of one row as floats.
void row_to_f32(DType type, const void* row, float* out, int64_t n);
// Dot product of one row with `n` floats (reference path: convert, multiply).
float row_dot_f32(DType type, const void* row, const float* x, int64_t n);

}  // namespace hearth::backend::cpu
