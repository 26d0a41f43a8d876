// Scalar reference conversions between float rows and every block format.
// These are the oracle for every faster kernel and the quantizer behind
// `hearth-cli quantize`. Q8_0 and Q4_0 (and the other legacy formats) round
// exactly as the reference engine does, so the bytes are identical; the
// K-quants and IQ4 formats use the same search-based scale selection.
#pragma once

#include <hearth/core/result.h>
#include <hearth/engine/quant/types.h>

#include <cstdint>

namespace hearth::quant {

// True for every type that dequantize_row/quantize_row handle.
bool has_reference(DType type);

// Converts one row of `n` values stored as `type` to float. `n` must be a
// multiple of the type's block size; `src` holds row_bytes(type, n) bytes.
Status dequantize_row(DType type, const void* src, float* dst, int64_t n);

// Converts `n` floats to `type`, writing row_bytes(type, n) bytes to `dst`.
// Deterministic: the same input always gives the same bytes.
Status quantize_row(DType type, const float* src, void* dst, int64_t n);

// Unchecked per-format entry points (n a multiple of the block size), for
// callers that validated the shape once, e.g. activation quantization.
void quantize_row_q8_0(const float* x, void* dst, int64_t n);
void quantize_row_q8_k(const float* x, void* dst, int64_t n);

}  // namespace hearth::quant
