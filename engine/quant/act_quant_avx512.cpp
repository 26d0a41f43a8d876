// AVX-512 activation quantizers (F32 -> Q8_0 / Q8_K), byte-identical to the
// reference ones in ref_legacy.cpp, as act_quant_avx2.cpp is: same scale,
// same rounding (roundf's ties-away-from-zero for Q8_0, ties-to-even for
// Q8_K), same first-maximum rule (act_quant_scale.inc states it; here the
// search is vectorized). A Q8_0 block is two registers. Every product's
// activations go through these, once per token: in a Qwen2.5-0.5B prefill
// the AVX2 versions were 6-7% of the time.
// Built with AVX-512 flags and -ffp-contract=off only.
#include <immintrin.h>

#include <cmath>
#include <cstring>

#include "hearth/engine/quant/blocks.h"
#include "hearth/engine/quant/fp16.h"
#include "kernels_internal.h"

namespace hearth::quant::detail {
namespace {

// roundf: nearest, ties away from zero. Round to nearest even, then fix the
// exact .5 cases (where v - trunc(v) is exactly +-0.5) to trunc(v) +- 1.
inline __m512i round_away(__m512 v) {
  const __m512 t = _mm512_roundscale_ps(v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
  const __mmask16 tie = _mm512_cmp_ps_mask(_mm512_abs_ps(_mm512_sub_ps(v, t)), _mm512_set1_ps(0.5f), _CMP_EQ_OQ);
  const __m512 away = _mm512_add_ps(t, _mm512_or_ps(_mm512_set1_ps(1.0f), _mm512_and_ps(v, _mm512_set1_ps(-0.0f))));
  const __m512 even = _mm512_roundscale_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  return _mm512_cvttps_epi32(_mm512_mask_blend_ps(tie, even, away));
}

// 16 int32 (each within int8 range) to 16 bytes.
inline void store16(int8_t* dst, __m512i v) {
  _mm_storeu_si128(reinterpret_cast<__m128i*>(dst), _mm512_cvtsepi32_epi8(v));
}

// Each 16 values' sum: vpsadbw sums 8 bytes at a time, taken unsigned
// (the codes + 128, a sign flip), so each bsums entry is two of those sums
// less 16 x 128. Exact, like the one reduction per 16 values it replaces
// (which made the Q8_K quantizer half as fast as the Q8_0 one).
inline void q8_k_bsums(BlockQ8_K& b) {
  const __m512i flip = _mm512_set1_epi8(static_cast<char>(0x80));
  alignas(64) uint64_t eights[kQK_K / 8];
  for (int k = 0; k < kQK_K; k += 64) {
    const __m512i v = _mm512_xor_si512(_mm512_loadu_si512(b.qs + k), flip);
    _mm512_store_si512(eights + k / 8, _mm512_sad_epu8(v, _mm512_setzero_si512()));
  }
  for (int j = 0; j < kQK_K / 16; ++j) {
    b.bsums[j] = static_cast<int16_t>(static_cast<int>(eights[2 * j] + eights[2 * j + 1]) - 16 * 128);
  }
}

void quantize_q8_0_avx512(const float* x, void* dst, int64_t n) {
  auto* b = static_cast<BlockQ8_0*>(dst);
  for (int64_t i = 0; i < n / kQK; ++i, x += kQK) {
    const __m512 v0 = _mm512_loadu_ps(x), v1 = _mm512_loadu_ps(x + 16);
    const float amax = _mm512_reduce_max_ps(_mm512_max_ps(_mm512_abs_ps(v0), _mm512_abs_ps(v1)));
    const float d = amax / 127;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    b[i].d = fp32_to_fp16(d);
    const __m512 idv = _mm512_set1_ps(id);
    store16(b[i].qs, round_away(_mm512_mul_ps(v0, idv)));
    store16(b[i].qs + 16, round_away(_mm512_mul_ps(v1, idv)));
  }
}

// The first of the block's values whose magnitude is amax (> 0), with its
// sign: first_of_magnitude's rule, 16 values per compare.
inline float first_of_magnitude_512(const float* x, float amax) {
  const __m512 target = _mm512_set1_ps(amax);
  for (int k = 0; k < kQK_K; k += 16) {
    const __mmask16 hit = _mm512_cmp_ps_mask(_mm512_abs_ps(_mm512_loadu_ps(x + k)), target, _CMP_EQ_OQ);
    if (hit != 0) return x[k + __builtin_ctz(hit)];
  }
  return amax;  // not reached: amax is one of the magnitudes
}

void quantize_q8_k_avx512(const float* x, void* dst, int64_t n) {
  auto* b = static_cast<BlockQ8_K*>(dst);
  for (int64_t i = 0; i < n / kQK_K; ++i, x += kQK_K) {
    __m512 m = _mm512_setzero_ps();
    for (int k = 0; k < kQK_K; k += 16) m = _mm512_max_ps(m, _mm512_abs_ps(_mm512_loadu_ps(x + k)));
    const float amax = _mm512_reduce_max_ps(m);
    if (amax == 0.0f) {
      std::memset(&b[i], 0, sizeof(b[i]));
      continue;
    }
    const float iscale = -127.f / first_of_magnitude_512(x, amax);
    const __m512 is = _mm512_set1_ps(iscale);
    for (int j = 0; j < kQK_K / 16; ++j) {
      // Nearest, ties to even (the MXCSR default), as the reference's nearest_int.
      const __m512i l = _mm512_min_epi32(_mm512_cvtps_epi32(_mm512_mul_ps(is, _mm512_loadu_ps(x + 16 * j))),
                                         _mm512_set1_epi32(127));
      store16(b[i].qs + 16 * j, l);
    }
    q8_k_bsums(b[i]);
    b[i].d = 1 / iscale;
  }
}

}  // namespace

void fill_act_quantizers_avx512(KernelTable& t) {
  t.quantize_q8_0 = quantize_q8_0_avx512;
  t.quantize_q8_k = quantize_q8_k_avx512;
}

}  // namespace hearth::quant::detail
