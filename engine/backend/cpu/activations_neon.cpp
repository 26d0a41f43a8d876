// Gated activations with NEON (4 lanes), for aarch64 CPUs at the Neon and
// NeonDotprod kernel levels. The kernels are activations_simd.inc.
#include "activations_fast.h"

#include <arm_neon.h>

#include <cmath>
#include <cstdint>

#include <hearth/engine/quant/blocks.h>
#include <hearth/engine/quant/fp16.h>


namespace hearth::backend::cpu {
namespace {

#include "simd_neon.inc"
#include "simd_math.inc"
#include "activations_simd.inc"

}  // namespace

void swiglu_neon(const float* g, const float* u, float* y, int64_t n) { swiglu_simd<Neon4>(g, u, y, n); }

void gelu_neon(const float* x, float* y, int64_t n) { gelu_simd<Neon4>(x, y, n); }

}  // namespace hearth::backend::cpu
