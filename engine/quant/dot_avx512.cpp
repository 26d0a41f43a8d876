// AVX-512 kernels (F/BW/VL/DQ + VNNI). The 256-bit implementation is
// compiled with VNNI on 256-bit registers; 512-bit kernels then replace the
// entries where they are faster: decode dots (dot_avx512_decode.inc), multi-row
// decode over a rearranged activation (dot_avx512_rows.inc, dot_avx512_rows_k.inc),
// decode over 16-row interleaved weights (dot_avx512_interleaved.inc,
// dot_avx512_interleaved_k.inc, dot_avx512_interleaved_q6k.inc), direct
// tiles (dot_avx512_wide.inc) and repacked 16-row tiles for prompt
// processing (dot_x86_packed.inc, then the register-blocked
// dot_avx512_prefill.inc, which registers the final gemm entries).
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

#define HEARTH_VNNI_MODE 2
#define HEARTH_FILL_FN fill_avx512_256
#define HEARTH_LEVEL KernelLevel::Avx512

namespace hearth::quant::detail {
namespace avx512 {
#include <hearth/engine/quant/isa_buffer.inc>
#include "dot_x86_256.inc"
#include "dot_avx512_wide.inc"
#include "dot_avx512_decode.inc"
#include "dot_avx512_rows.inc"
#include "dot_avx512_rows_k.inc"
#include "dot_avx512_rows_multi.inc"
#include "dot_avx512_interleaved.inc"
#include "dot_avx512_interleaved_k.inc"
#include "dot_avx512_interleaved_q6k.inc"
#include "dot_avx512_q8_0_decode.inc"

// 16 weight rows per 512-bit register for the repacked tiles.
struct PackVec {
  static constexpr int kRows = 16;
  using F = __m512;
  using I = __m512i;
  static F fzero() { return _mm512_setzero_ps(); }
  static I izero() { return _mm512_setzero_si512(); }
  static I dp(I acc, const uint32_t* w, int32_t word) {
    return _mm512_dpbusd_epi32(acc, _mm512_load_si512(w), _mm512_set1_epi32(word));
  }
  static I iset1(int32_t v) { return _mm512_set1_epi32(v); }
  static F cvt(I v) { return _mm512_cvtepi32_ps(v); }
  static F cvt_pair(I a, I b) { return _mm512_cvtepi32_ps(_mm512_add_epi32(a, b)); }
  static F load(const float* p) { return _mm512_loadu_ps(p); }
  static F set1(float v) { return _mm512_set1_ps(v); }
  static F mul(F a, F b) { return _mm512_mul_ps(a, b); }
  static F fmadd(F a, F b, F c) { return _mm512_fmadd_ps(a, b, c); }
  static F fnmadd(F a, F b, F c) { return _mm512_fnmadd_ps(a, b, c); }
  static void store_rows(float* out, F v, int rows) {
    _mm512_mask_storeu_ps(out, static_cast<__mmask16>((1u << rows) - 1), v);
  }
};

#include "dot_x86_packed.inc"
#include "dot_avx512_fill.inc"
#include "dot_avx512_prefill.inc"
}  // namespace avx512

void fill_avx512(KernelTable& t) {
  avx512::fill_avx512_256(t);
  avx512::fill_avx512_wide(t);
  avx512::fill_avx512_packed(t);
  avx512::fill_avx512_rows(t);
  avx512::fill_avx512_rows_k(t);
  avx512::fill_avx512_rows_multi(t);
  avx512::fill_avx512_interleaved(t);
  avx512::fill_avx512_interleaved_k(t);
  avx512::fill_avx512_interleaved_q6k(t);
  avx512::fill_avx512_q8_0_decode(t);
  // Q5_K keeps this level's 512-bit row dot, faster than the 256-bit decode
  // rows the AVX-VNNI level left in the table (bench_quant DecodeCache).
  t.by_type[static_cast<size_t>(DType::Q5_K)].decode = {};
  avx512::fill_avx512_prefill(t);
}

}  // namespace hearth::quant::detail
