// Vector math for the AVX2 translation units of the CPU backend (compiled
// with -mavx2 -mfma; include nowhere else).
#pragma once

#include <immintrin.h>

namespace hearth::backend::cpu {

// e^x for x in any range (clamped to the float range): 2^n e^r with
// |r| <= ln2/2 and a degree-6 Taylor polynomial (relative error < 2e-7),
// as exp512. The clamp keeps n in [-126, 127], so 2^n is a normal float
// built in the exponent field.
static inline __m256 exp256(__m256 x) {
  x = _mm256_max_ps(_mm256_min_ps(x, _mm256_set1_ps(88.0f)), _mm256_set1_ps(-87.0f));
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504089f)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693145751953125f), x);  // ln2 high part, exact product
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(1.428606765330187e-06f), r);     // ln2 low part
  __m256 p = _mm256_set1_ps(1.0f / 720);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 120));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 24));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 6));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.5f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
  const __m256i bits = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_mul_ps(p, _mm256_castsi256_ps(bits));
}

// cap * tanh(s / cap) = cap * (1 - 2 / (e^(2s/cap) + 1)).
static inline __m256 softcap256(__m256 s, float cap) {
  const __m256 e = exp256(_mm256_mul_ps(s, _mm256_set1_ps(2.0f / cap)));
  const __m256 t = _mm256_sub_ps(_mm256_set1_ps(1.0f), _mm256_div_ps(_mm256_set1_ps(2.0f), _mm256_add_ps(e, _mm256_set1_ps(1.0f))));
  return _mm256_mul_ps(t, _mm256_set1_ps(cap));
}

}  // namespace hearth::backend::cpu
