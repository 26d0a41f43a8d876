// The vector gated activations (activations_simd.inc). On x86-64:
// activations_avx512.cpp, called only when the kernel table reached the
// Avx512 level, and activations_avx2.cpp, at the Avx2 and AvxVnni levels. On
// aarch64: activations_neon.cpp at the Neon and NeonDotprod levels. Each
// exists only on its architecture.
#pragma once

#include <cstdint>

namespace hearth::backend::cpu {

// y[i] = silu(g[i]) * u[i] for i < n, as op_swiglu's scalar loop (up to float rounding).
void swiglu_avx512(const float* g, const float* u, float* y, int64_t n);
// y[i] = gelu_tanh(x[i]) for i < n, as op_gelu's scalar loop (up to float rounding).
void gelu_avx512(const float* x, float* y, int64_t n);
// The same with 8 lanes (AVX2 + FMA).
void swiglu_avx2(const float* g, const float* u, float* y, int64_t n);
void gelu_avx2(const float* x, float* y, int64_t n);
// The same with 4 lanes (NEON).
void swiglu_neon(const float* g, const float* u, float* y, int64_t n);
void gelu_neon(const float* x, float* y, int64_t n);

}  // namespace hearth::backend::cpu
