// Gated activations with AVX-512 (the scalar versions in ops_basic.cpp stay
// the reference). Called only when the kernel table reached the Avx512 level.
#include "activations_fast.h"

#include <immintrin.h>

#include <cmath>

#include "math_avx512.h"

namespace hearth::backend::cpu {

void swiglu_avx512(const float* g, const float* u, float* y, int64_t n) {
  int64_t i = 0;
  const __m512 one = _mm512_set1_ps(1.0f);
  for (; i + 16 <= n; i += 16) {
    const __m512 x = _mm512_loadu_ps(g + i);
    // silu(x) = x / (1 + e^-x); exp512 clamps its argument, so a very
    // negative x gives x / 1.7e38 (a correctly signed ~0), never x / inf.
    const __m512 silu = _mm512_div_ps(x, _mm512_add_ps(one, exp512(_mm512_sub_ps(_mm512_setzero_ps(), x))));
    _mm512_storeu_ps(y + i, _mm512_mul_ps(silu, _mm512_loadu_ps(u + i)));
  }
  for (; i < n; ++i) y[i] = g[i] / (1.0f + std::exp(-g[i])) * u[i];
}

void gelu_avx512(const float* x, float* y, int64_t n) {
  // 0.5 * (1 + tanh(z)) = 1 / (1 + e^(-2z)): the tanh form of GELU as one
  // exponential, z = sqrt(2/pi) * (x + 0.044715 x^3). exp512 clamps its
  // argument, so a very negative x gives x / 1.7e38 (~0), never x / inf.
  constexpr float kC = 0.79788456080286535588f;
  const __m512 one = _mm512_set1_ps(1.0f);
  const __m512 minus_2c = _mm512_set1_ps(-2.0f * kC);
  const __m512 cubic = _mm512_set1_ps(0.044715f);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512 v = _mm512_loadu_ps(x + i);
    const __m512 inner = _mm512_fmadd_ps(_mm512_mul_ps(cubic, v), _mm512_mul_ps(v, v), v);
    const __m512 e = exp512(_mm512_mul_ps(minus_2c, inner));
    _mm512_storeu_ps(y + i, _mm512_div_ps(v, _mm512_add_ps(one, e)));
  }
  for (; i < n; ++i) {
    const float v = x[i];
    y[i] = 0.5f * v * (1.0f + std::tanh(kC * v * (1.0f + 0.044715f * v * v)));
  }
}

}  // namespace hearth::backend::cpu
