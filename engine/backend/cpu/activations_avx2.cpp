// Gated activations with AVX2 + FMA + F16C (8 lanes). Called only when the
// kernel table reached the Avx2 or AvxVnni level.
// The kernels are activations_simd.inc.
#include "activations_fast.h"

#include <immintrin.h>

#include <cmath>
#include <cstdint>

#include <hearth/engine/quant/blocks.h>


namespace hearth::backend::cpu {
namespace {

#include "simd_ymm.inc"
#include "simd_math.inc"
#include "activations_simd.inc"

}  // namespace

void swiglu_avx2(const float* g, const float* u, float* y, int64_t n) { swiglu_simd<Ymm>(g, u, y, n); }

void gelu_avx2(const float* x, float* y, int64_t n) { gelu_simd<Ymm>(x, y, n); }

}  // namespace hearth::backend::cpu
