// The AVX-512 gated activations (activations_avx512.cpp), compiled only for
// x86-64 and called only when the kernel table reached the Avx512 level.
#pragma once

#include <cstdint>

namespace hearth::backend::cpu {

// y[i] = silu(g[i]) * u[i] for i < n, as op_swiglu's scalar loop (up to float rounding).
void swiglu_avx512(const float* g, const float* u, float* y, int64_t n);
// y[i] = gelu_tanh(x[i]) for i < n, as op_gelu's scalar loop (up to float rounding).
void gelu_avx512(const float* x, float* y, int64_t n);

}  // namespace hearth::backend::cpu
