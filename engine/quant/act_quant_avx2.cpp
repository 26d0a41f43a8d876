// AVX2 activation quantizers (F32 -> Q8_0 / Q8_K), byte-identical to the
// reference ones in ref_legacy.cpp: same scale, same rounding (roundf's
// ties-away-from-zero for Q8_0, ties-to-even for Q8_K), same first-maximum
// rule (act_quant_scale.inc states it; here the search is vectorized). Built
// with -mavx2 and -ffp-contract=off only.
#include <immintrin.h>

#include <cmath>
#include <cstring>

#include "hearth/engine/quant/blocks.h"
#include "hearth/engine/quant/fp16.h"
#include "kernels_internal.h"

namespace hearth::quant::detail {
namespace {

inline float hmax(__m256 v) {
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  m = _mm_max_ss(m, _mm_movehdup_ps(m));
  return _mm_cvtss_f32(m);
}

inline __m256 abs8(__m256 v) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), v); }

// roundf: nearest, ties away from zero. Round to nearest even, then fix the
// exact .5 cases (where v - trunc(v) is exactly +-0.5) to trunc(v) +- 1.
inline __m256i round_away(__m256 v) {
  const __m256 t = _mm256_round_ps(v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
  const __m256 frac = abs8(_mm256_sub_ps(v, t));
  const __m256 tie = _mm256_cmp_ps(frac, _mm256_set1_ps(0.5f), _CMP_EQ_OQ);
  const __m256 away = _mm256_add_ps(t, _mm256_or_ps(_mm256_set1_ps(1.0f), _mm256_and_ps(v, _mm256_set1_ps(-0.0f))));
  const __m256 even = _mm256_round_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  return _mm256_cvttps_epi32(_mm256_blendv_ps(even, away, tie));
}

// Packs 4 x 8 int32 (each within int8 range) to 32 bytes in element order.
inline __m256i pack32(__m256i a, __m256i b, __m256i c, __m256i d) {
  const __m256i ab = _mm256_packs_epi32(a, b);
  const __m256i cd = _mm256_packs_epi32(c, d);
  const __m256i abcd = _mm256_packs_epi16(ab, cd);
  // The packs work per 128-bit lane: restore the order of the 4-byte groups.
  return _mm256_permutevar8x32_epi32(abcd, _mm256_set_epi32(7, 3, 6, 2, 5, 1, 4, 0));
}

void quantize_q8_0_avx2(const float* x, void* dst, int64_t n) {
  auto* b = static_cast<BlockQ8_0*>(dst);
  for (int64_t i = 0; i < n / kQK; ++i, x += kQK) {
    __m256 v[4];
    __m256 m = _mm256_setzero_ps();
    for (int k = 0; k < 4; ++k) {
      v[k] = _mm256_loadu_ps(x + 8 * k);
      m = _mm256_max_ps(m, abs8(v[k]));
    }
    const float amax = hmax(m);
    const float d = amax / 127;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    b[i].d = fp32_to_fp16(d);
    const __m256 idv = _mm256_set1_ps(id);
    __m256i q[4];
    for (int k = 0; k < 4; ++k) q[k] = round_away(_mm256_mul_ps(v[k], idv));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(b[i].qs), pack32(q[0], q[1], q[2], q[3]));
  }
}

// The first of the block's values whose magnitude is amax (> 0), with its
// sign (the reference's rule: the largest magnitude sets the scale, its
// first occurrence the sign), 8 values per compare.
inline float first_of_magnitude_256(const float* x, float amax) {
  const __m256 target = _mm256_set1_ps(amax);
  for (int k = 0; k < kQK_K; k += 8) {
    const int hit = _mm256_movemask_ps(_mm256_cmp_ps(abs8(_mm256_loadu_ps(x + k)), target, _CMP_EQ_OQ));
    if (hit != 0) return x[k + __builtin_ctz(static_cast<unsigned>(hit))];
  }
  return amax;  // not reached: amax is one of the magnitudes
}

// Each 16 values' sum: vpsadbw sums 8 bytes at a time, taken unsigned (the
// codes + 128, a sign flip), so each bsums entry is two of those sums less
// 16 x 128. Exact, like the widening sum per 16 values it replaces.
inline void q8_k_bsums(BlockQ8_K& b) {
  const __m256i flip = _mm256_set1_epi8(static_cast<char>(0x80));
  alignas(32) uint64_t eights[kQK_K / 8];
  for (int k = 0; k < kQK_K; k += 32) {
    const __m256i v = _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.qs + k)), flip);
    _mm256_store_si256(reinterpret_cast<__m256i*>(eights + k / 8), _mm256_sad_epu8(v, _mm256_setzero_si256()));
  }
  for (int j = 0; j < kQK_K / 16; ++j) {
    b.bsums[j] = static_cast<int16_t>(static_cast<int>(eights[2 * j] + eights[2 * j + 1]) - 16 * 128);
  }
}

void quantize_q8_k_avx2(const float* x, void* dst, int64_t n) {
  auto* b = static_cast<BlockQ8_K*>(dst);
  for (int64_t i = 0; i < n / kQK_K; ++i, x += kQK_K) {
    __m256 m = _mm256_setzero_ps();
    for (int k = 0; k < kQK_K; k += 8) m = _mm256_max_ps(m, abs8(_mm256_loadu_ps(x + k)));
    const float amax = hmax(m);
    if (amax == 0.0f) {
      std::memset(&b[i], 0, sizeof(b[i]));
      continue;
    }
    const float iscale = -127.f / first_of_magnitude_256(x, amax);
    const __m256 is = _mm256_set1_ps(iscale);
    for (int k = 0; k < kQK_K; k += 32) {
      __m256i q[4];
      for (int j = 0; j < 4; ++j) {
        // Nearest, ties to even (the MXCSR default), as the reference's nearest_int.
        const __m256i l = _mm256_cvtps_epi32(_mm256_mul_ps(is, _mm256_loadu_ps(x + k + 8 * j)));
        q[j] = _mm256_min_epi32(l, _mm256_set1_epi32(127));
      }
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(b[i].qs + k), pack32(q[0], q[1], q[2], q[3]));
    }
    q8_k_bsums(b[i]);
    b[i].d = 1 / iscale;
  }
}

}  // namespace

void fill_act_quantizers_avx2(KernelTable& t) {
  t.quantize_q8_0 = quantize_q8_0_avx2;
  t.quantize_q8_k = quantize_q8_k_avx2;
}

}  // namespace hearth::quant::detail
