// Avx2 kernels: the shared 256-bit implementation compiled for this level
// (see dot_x86_256.inc; compile flags are set per file in CMakeLists.txt),
// multi-row decode for Q4_0 / Q5_0 (dot_avx2_rows.inc) and Q4_K / Q5_K /
// Q6_K (dot_avx2_rows_k.inc), the 16-row interleaved layout's decode
// (dot_avx2_interleaved.inc, dot_avx2_interleaved_k.inc),
// plus repacked 8-row prompt-processing tiles for the formats whose codes
// are small enough for vpmaddubsw sums to stay in int16 (see PackVec).
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>

#include "hearth/engine/quant/blocks.h"
#include "hearth/engine/quant/fp16.h"
#include "hearth/engine/quant/interleave.h"
#include "kernels_internal.h"
#include "ref_internal.h"

#define HEARTH_VNNI_MODE 0
#define HEARTH_FILL_FN fill_avx2
#define HEARTH_LEVEL KernelLevel::Avx2

namespace hearth::quant::detail {
namespace avx2 {
#include <hearth/engine/quant/isa_buffer.inc>
#include "dot_x86_256.inc"
#include "dot_dec32_act.inc"
#include "dot_avx2_rows.inc"
#include "dot_avx2_interleaved.inc"
#include "dot_avx2_rows_k.inc"
#include "dot_avx2_interleaved_k.inc"

// 8 weight rows per register. Without VNNI, vpmaddubsw gives int16 pair sums
// that are accumulated in int16 over the groups of a (half) block and
// widened once: exact while 2 * max(u) * 127 * groups < 32768, i.e. codes
// <= 15 over 8 groups (Q4_0 as raw nibbles), <= 31 over 4 (Q5_0, whose
// sums widen per half block; Q3_K, Q2_K). Q4_K, Q5_K and Q6_K have their
// own tiles (dot_avx2_packed_k.inc).
// Q8_0's, IQ4_NL's and IQ4_XS's signed codes go through dp_signed: |v|
// times the activation with v's sign (vpsignb), widened every group
// (2 x 128 x 127 < 32768). Other formats keep the plain tiles at this level.
struct PackVec {
  static constexpr int kRows = 8;
  using F = __m256;
  using I = __m256i;  // 16 int16 pair sums: lanes 2r, 2r+1 belong to row r
  static F fzero() { return _mm256_setzero_ps(); }
  static I izero() { return _mm256_setzero_si256(); }
  static I iset1(int32_t) { return _mm256_setzero_si256(); }  // no kSym128 packers here
  static I dp(I acc, const uint32_t* w, int32_t word) {
    const __m256i u = _mm256_load_si256(reinterpret_cast<const __m256i*>(w));
    return in_order(_mm256_add_epi16(acc, _mm256_maddubs_epi16(u, _mm256_set1_epi32(word))));
  }
  // acc: 8 int32 row sums; mag, sign: the codes' magnitudes and the codes.
  static I dp_signed(I acc, const uint32_t* mag, const uint32_t* sign, int32_t word) {
    const __m256i v = _mm256_load_si256(reinterpret_cast<const __m256i*>(sign));
    const __m256i a = _mm256_sign_epi8(_mm256_set1_epi32(word), v);
    const __m256i pairs = _mm256_maddubs_epi16(_mm256_load_si256(reinterpret_cast<const __m256i*>(mag)), a);
    return in_order(_mm256_add_epi32(acc, _mm256_madd_epi16(pairs, _mm256_set1_epi16(1))));
  }
  static F cvt(I v) { return _mm256_cvtepi32_ps(_mm256_madd_epi16(v, _mm256_set1_epi16(1))); }
  static F cvt_wide(I v) { return _mm256_cvtepi32_ps(v); }
  static F cvt_pair(I a, I b) {
    const __m256i ones = _mm256_set1_epi16(1);
    return _mm256_cvtepi32_ps(_mm256_add_epi32(_mm256_madd_epi16(a, ones), _mm256_madd_epi16(b, ones)));
  }
  static F load(const float* p) { return _mm256_loadu_ps(p); }
  static F set1(float v) { return _mm256_set1_ps(v); }
  static F mul(F a, F b) { return _mm256_mul_ps(a, b); }
  static F fmadd(F a, F b, F c) { return _mm256_fmadd_ps(a, b, c); }
  static F fnmadd(F a, F b, F c) { return _mm256_fnmadd_ps(a, b, c); }
  static void store_rows(float* out, F v, int rows) {
    if (rows == kRows) {
      _mm256_storeu_ps(out, v);
    } else {
      const __m256i lane = _mm256_set_epi32(7, 6, 5, 4, 3, 2, 1, 0);
      _mm256_maskstore_ps(out, _mm256_cmpgt_epi32(_mm256_set1_epi32(rows), lane), v);
    }
  }
};

#include "dot_x86_packed.inc"
#include "dot_avx2_packed_k.inc"

namespace {

// Q4_0 as raw nibbles u = q (0..15): x = d u - 8 d.
struct Q4_0NibblePacker {
  using Act = BlockQ8_0;
  static constexpr int kHalves = 1;
  static constexpr bool kSym128 = false;
  static void unpack(const uint8_t* row, int64_t b, uint8_t* u, float* d, float* m) {
    const BlockQ4_0& blk = reinterpret_cast<const BlockQ4_0*>(row)[b];
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(u), bytes_from_nibbles(blk.qs));
    *d = half(blk.d);
    *m = 8.0f * *d;
  }
};

// Codes u = v + 16 (Q5_0's raw q, 0..31; MXFP4's table values -12..12 as
// 4..28): x = d u - 16 d. Eight int16 pair sums of such codes could pass
// 32767 (2 x 31 x 127 x 8), so they widen per 16 values (kSplitSums:
// 2 x 31 x 127 x 4 < 32768).
template <typename W>
struct Plus16Packer {
  using Act = BlockQ8_0;
  static constexpr int kHalves = 1;
  static constexpr bool kSym128 = false;
  static constexpr bool kSplitSums = true;
  static void unpack(const uint8_t* row, int64_t b, uint8_t* u, float* d, float* m) {
    const typename W::Block& blk = reinterpret_cast<const typename W::Block*>(row)[b];
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(u), _mm256_add_epi8(W::values(blk), _mm256_set1_epi8(16)));
    *d = weight_scale(blk);
    *m = 16.0f * *d;
  }
};

// Signed codes taken as they are (x = d v, |v| <= 127): see
// PackVec::dp_signed. Q8_0's, and IQ4_NL's and IQ4_XS's table values
// (-127..113): without this path IQ4_NL and IQ4_XS prompts took one row dot
// per output at this level (the 1B IQ4_XS file's pp64 matched the
// reference's instead of doubling it).
struct SignedCodes {
  static constexpr int kHalves = 1;
  static constexpr bool kSym128 = false;
  static constexpr bool kSignedCodes = true;  // m is 0
};
template <typename W>
struct SignedPacker : SignedCodes {
  using Act = BlockQ8_0;
  static void unpack(const uint8_t* row, int64_t b, uint8_t* u, float* d, float* m) {
    const typename W::Block& blk = reinterpret_cast<const typename W::Block*>(row)[b];
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(u), W::values(blk));
    *d = weight_scale(blk);
    *m = 0.0f;
  }
};
struct IQ4_XSSignedPacker : SignedCodes {
  using Act = BlockQ8_K;
  static void unpack(const uint8_t* row, int64_t b, uint8_t* u, float* d, float* m) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(u), iq4xs_sub_block(row, b, d));
    *m = 0.0f;
  }
};

}  // namespace

void fill_avx2_packed(KernelTable& t) {
  using detail::gemm_by_dot;
  const auto gemm = [&t](DType type, GemmFn fn) { t.by_type[static_cast<size_t>(type)].gemm = fn; };
  gemm(DType::Q8_0, gemm_auto<SignedPacker<Q8_0Weights>, gemm_sym32<Q8_0Weights>, dot_sym32<Q8_0Weights>>);
  gemm(DType::Q4_0, gemm_auto<Q4_0NibblePacker, gemm_sym32<Q4_0Weights>, dot_sym32<Q4_0Weights>>);
  gemm(DType::Q5_0, gemm_auto<Plus16Packer<Q5_0Weights>, gemm_sym32<Q5_0Weights>, dot_sym32<Q5_0Weights>>);
  gemm(DType::MXFP4, gemm_auto<Plus16Packer<MXFP4Weights>, gemm_sym32<MXFP4Weights>, dot_sym32<MXFP4Weights>>);
  gemm(DType::Q4_1, gemm_auto<AsymPacker<Q4_1Weights, false>, gemm_by_dot<dot_asym32<Q4_1Weights>>,
                              dot_asym32<Q4_1Weights>>);
  gemm(DType::Q5_1, gemm_auto<AsymPacker<Q5_1Weights, true>, gemm_by_dot<dot_asym32<Q5_1Weights>>,
                              dot_asym32<Q5_1Weights>>);
  gemm(DType::Q4_K, gemm_k_auto<KScaleUnits<false>, dot_q4_k>);
  gemm(DType::Q5_K, gemm_k_auto<KScaleUnits<true>, dot_q5_k>);
  gemm(DType::Q3_K, gemm_auto<Q3KPacker, gemm_by_dot<dot_q3_k>, dot_q3_k>);
  gemm(DType::Q6_K, gemm_k_auto<Q6KScaleUnits, dot_q6_k>);
  gemm(DType::Q2_K, gemm_auto<Q2KPacker, gemm_by_dot<dot_q2_k>, dot_q2_k>);
  gemm(DType::IQ4_NL, gemm_auto<SignedPacker<IQ4_NLWeights>, gemm_sym32<IQ4_NLWeights>, dot_sym32<IQ4_NLWeights>>);
  gemm(DType::IQ4_XS, gemm_auto<IQ4_XSSignedPacker, gemm_by_dot<dot_iq4_xs>, dot_iq4_xs>);
}
namespace {
// F16C conversion, 16 values per step.
void halves_to_floats(const uint16_t* src, float* dst, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i))));
    _mm256_storeu_ps(dst + i + 8, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i + 8))));
  }
  for (; i < n; ++i) dst[i] = _cvtsh_ss(src[i]);
}

// F16C conversion, 8 values per step, rounding to nearest even as
// fp32_to_fp16 does. The instruction keeps a NaN's payload bits where
// fp32_to_fp16 writes one quiet NaN, so a step that holds a NaN (never, in
// a working model) is converted by the scalar function.
void floats_to_halves(const float* src, uint16_t* dst, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_loadu_ps(src + i);
    if (_mm256_movemask_ps(_mm256_cmp_ps(v, v, _CMP_UNORD_Q)) != 0) {
      for (int k = 0; k < 8; ++k) dst[i + k] = fp32_to_fp16(src[i + k]);
      continue;
    }
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i),
                     _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  }
  for (; i < n; ++i) dst[i] = fp32_to_fp16(src[i]);
}
}  // namespace

}  // namespace avx2

void fill_avx2(KernelTable& t) {
  avx2::fill_avx2(t);
  avx2::fill_avx2_packed(t);
  avx2::fill_avx2_rows(t);
  avx2::fill_avx2_interleaved(t);
  avx2::fill_avx2_rows_k(t);
  avx2::fill_avx2_interleaved_k(t);
  t.f16_to_f32 = avx2::halves_to_floats;
  t.f32_to_f16 = avx2::floats_to_halves;
}

}  // namespace hearth::quant::detail
