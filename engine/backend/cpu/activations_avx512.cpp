// Gated activations with AVX-512 (16 lanes). Called only when the kernel
// table reached the Avx512 level.
// The kernels are activations_simd.inc.
#include "activations_fast.h"

#include <immintrin.h>

#include <cmath>
#include <cstdint>

#include <hearth/engine/quant/blocks.h>


namespace hearth::backend::cpu {
namespace {

#include "simd_zmm.inc"
#include "simd_math.inc"
#include "activations_simd.inc"

}  // namespace

void swiglu_avx512(const float* g, const float* u, float* y, int64_t n) { swiglu_simd<Zmm>(g, u, y, n); }

void gelu_avx512(const float* x, float* y, int64_t n) { gelu_simd<Zmm>(x, y, n); }

}  // namespace hearth::backend::cpu
