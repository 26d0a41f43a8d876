// Reading weights whatever their layout (tensor.h WeightLayout): the one
// conversion from the interleaved groups back to plain rows, for the paths
// that have no kernel for the interleaved layout (another kernel level,
// embedding lookups, uploads to a GPU).
#pragma once

#include <hearth/engine/backend/tensor.h>

#include <cstdint>

namespace hearth::backend {

// Rows [r0, r0 + n) of weight `w` in the plain layout, n * w.row_bytes()
// bytes written to dst.
void copy_plain_rows(const Tensor& w, int64_t r0, int64_t n, void* dst);

// Rows [r0, r0 + n) of `w` in the plain layout: in place for a plain weight,
// otherwise converted into `scratch` (n * w.row_bytes() bytes; unused for a
// plain weight).
const uint8_t* plain_rows(const Tensor& w, int64_t r0, int64_t n, uint8_t* scratch);

}  // namespace hearth::backend
