// AvxVnni kernels: the shared 256-bit implementation compiled for this level
// (see dot_x86_256.inc; compile flags are set per file in CMakeLists.txt),
// the multi-row decode kernels of the AVX2 level recompiled with vpdpbusd /
// vpdpwssd (dot_avx2_rows.inc, dot_avx2_rows_k.inc), plus repacked 8-row
// prompt-processing tiles (dot_x86_packed.inc).
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

#define HEARTH_VNNI_MODE 1
#define HEARTH_FILL_FN fill_avxvnni
#define HEARTH_LEVEL KernelLevel::AvxVnni

namespace hearth::quant::detail {
namespace avxvnni {
#include <hearth/engine/quant/isa_buffer.inc>
#include "dot_x86_256.inc"
#include "dot_dec32_act.inc"
#include "dot_avx2_rows.inc"
#include "dot_avx2_interleaved.inc"
#include "dot_avx2_rows_k.inc"
#include "dot_avx2_interleaved_k.inc"

// 8 weight rows per 256-bit register for the repacked tiles.
struct PackVec {
  static constexpr int kRows = 8;
  using F = __m256;
  using I = __m256i;
  static F fzero() { return _mm256_setzero_ps(); }
  static I izero() { return _mm256_setzero_si256(); }
  static I dp(I acc, const uint32_t* w, int32_t word) {
    return _mm256_dpbusd_avx_epi32(acc, _mm256_load_si256(reinterpret_cast<const __m256i*>(w)),
                                   _mm256_set1_epi32(word));
  }
  static I iset1(int32_t v) { return _mm256_set1_epi32(v); }
  static F cvt(I v) { return _mm256_cvtepi32_ps(v); }
  static F cvt_pair(I a, I b) { return _mm256_cvtepi32_ps(_mm256_add_epi32(a, b)); }
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

// Prompt-processing tiles of this level: repacked 8-row tiles for >= 8 rows
// and >= 4 columns (see gemm_auto), the 256-bit kernels otherwise.
void fill_avxvnni_packed(KernelTable& t) {
  using detail::gemm_by_dot;
  const auto gemm = [&t](DType type, GemmFn fn) { t.by_type[static_cast<size_t>(type)].gemm = fn; };
  gemm(DType::Q8_0, gemm_auto<LegacyPacker<Q8_0Weights>, gemm_sym32<Q8_0Weights>, dot_sym32<Q8_0Weights>>);
  gemm(DType::Q4_0, gemm_auto<LegacyPacker<Q4_0Weights>, gemm_sym32<Q4_0Weights>, dot_sym32<Q4_0Weights>>);
  gemm(DType::Q5_0, gemm_auto<LegacyPacker<Q5_0Weights>, gemm_sym32<Q5_0Weights>, dot_sym32<Q5_0Weights>>);
  gemm(DType::IQ4_NL, gemm_auto<LegacyPacker<IQ4_NLWeights>, gemm_sym32<IQ4_NLWeights>, dot_sym32<IQ4_NLWeights>>);
  gemm(DType::MXFP4, gemm_auto<LegacyPacker<MXFP4Weights>, gemm_sym32<MXFP4Weights>, dot_sym32<MXFP4Weights>>);
  gemm(DType::Q4_1, gemm_auto<AsymPacker<Q4_1Weights, false>, gemm_by_dot<dot_asym32<Q4_1Weights>>,
                              dot_asym32<Q4_1Weights>>);
  gemm(DType::Q5_1, gemm_auto<AsymPacker<Q5_1Weights, false>, gemm_by_dot<dot_asym32<Q5_1Weights>>,
                              dot_asym32<Q5_1Weights>>);
  gemm(DType::Q4_K, gemm_auto<K45Packer<false>, gemm_by_dot<dot_q4_k>, dot_q4_k>);
  gemm(DType::Q5_K, gemm_auto<K45Packer<true>, gemm_by_dot<dot_q5_k>, dot_q5_k>);
  gemm(DType::Q6_K, gemm_auto<Q6KPacker, gemm_by_dot<dot_q6_k>, dot_q6_k>);
  gemm(DType::IQ4_XS, gemm_auto<IQ4XSPacker, gemm_by_dot<dot_iq4_xs>, dot_iq4_xs>);
  gemm(DType::Q3_K, gemm_auto<Q3KPacker, gemm_by_dot<dot_q3_k>, dot_q3_k>);
  gemm(DType::Q2_K, gemm_auto<Q2KPacker, gemm_by_dot<dot_q2_k>, dot_q2_k>);
}
}  // namespace avxvnni

void fill_avxvnni(KernelTable& t) {
  avxvnni::fill_avxvnni(t);
  avxvnni::fill_avxvnni_packed(t);
  avxvnni::fill_avx2_rows(t);
  avxvnni::fill_avx2_interleaved(t);
  avxvnni::fill_avx2_rows_k(t);
  avxvnni::fill_avx2_interleaved_k(t);
}

}  // namespace hearth::quant::detail
