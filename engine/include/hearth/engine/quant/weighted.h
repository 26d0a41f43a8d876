// Importance-weighted quantization: the block searches weigh each value's
// error by how strongly the model's activations use its column (an
// importance matrix, imatrix/importance.h), as the reference engine's
// quantizer does when given one. Formats without a weighted search (Q8_0,
// F16, MXFP4, ...) quantize as quantize_row() does.
#pragma once

#include <hearth/core/result.h>
#include <hearth/engine/quant/reference.h>
#include <hearth/engine/quant/types.h>

#include <cstdint>

namespace hearth::quant {

// True for the formats whose search takes importance weights: Q2_K, Q3_K,
// Q4_K, Q5_K, Q6_K, Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL, IQ4_XS.
bool takes_importance(DType type);

// Quantizes one row of `n` values. `importance` ({n}: the mean squared
// activation of each column, >= 0) may be null: then the plain quantize_row().
// Deterministic, like quantize_row().
Status quantize_row_weighted(DType type, const float* src, void* dst, int64_t n, const float* importance);

}  // namespace hearth::quant
