// Row-level access to weights of every supported type: the seam between the
// CPU backend and the block formats. Plain float types are handled here; the
// block formats come from hearth_quant's kernel table.
#pragma once

#include <hearth/engine/quant/types.h>

#include <cstdint>

namespace hearth::backend::cpu {

struct WeightRowOps {
  // Writes the `n` values of one row as floats.
  void (*to_f32)(const void* row, float* out, int64_t n) = nullptr;
  // Dot product of one row with `n` floats.
  float (*dot_f32)(const void* row, const float* x, int64_t n) = nullptr;
};

// nullptr when the type has no CPU kernels.
const WeightRowOps* weight_row_ops(DType type);

float f16_to_f32(uint16_t h);
uint16_t f32_to_f16(float f);

}  // namespace hearth::backend::cpu
