// Internal declarations shared by the reference quantizers (not installed).
#pragma once

#include <hearth/engine/quant/blocks.h>
#include <hearth/engine/quant/types.h>

#include <bit>
#include <cstdint>

namespace hearth::quant::detail {

// Groups whose largest magnitude is below this quantize to all zeros.
inline constexpr float kGroupMaxEps = 1e-15f;

// Round to nearest, ties to even, via the float magic-number trick the
// reference engine uses (valid for |x| < 2^22); the quantizers rely on the
// exact tie behaviour to reproduce the reference bytes.
// The inline helpers are `static` (one copy per translation unit): the
// -mavx2/-mavx512f kernel files include them too, and a single shared copy
// could be the one compiled for an instruction set the CPU lacks.
static inline int nearest_int(float fval) {
  const float val = fval + 12582912.f;
  const int32_t i = std::bit_cast<int32_t>(val);
  return (i & 0x007fffff) - 0x00400000;
}

// Index of the value of the sorted table `val` (n entries) closest to x.
int best_index_int8(int n, const int8_t* val, float x);

// Scale search helpers (quant_search.cpp). See there for the algorithms.
float make_qx_quants(int n, int nmax, const float* x, int8_t* L, int rmse_type);
float make_q3_quants(int n, int nmax, const float* x, int8_t* L, bool do_rmse);
float make_qkx2_quants(int n, int nmax, const float* x, const float* weights, uint8_t* L,
                       float* the_min, uint8_t* Laux, float rmin, float rdelta, int nstep,
                       bool use_mad);
// The same search with the candidate scales evaluated 8 at a time (AVX2,
// quant_search_avx2.cpp). Each lane sums in the scalar order, so results are
// bit-identical to make_qkx2_quants.
float make_qkx2_quants_avx2(int n, int nmax, const float* x, const float* weights, uint8_t* L,
                            float* the_min, uint8_t* Laux, float rmin, float rdelta, int nstep,
                            bool use_mad);
using Qkx2Fn = decltype(&make_qkx2_quants);
float make_qx_quants_avx2(int n, int nmax, const float* x, int8_t* L, int rmse_type);
using QxFn = decltype(&make_qx_quants);
// IQ4 quantization of one super-block (shared by IQ4_NL with one 32-value
// block and IQ4_XS with 8 sub-blocks). Writes d, the packed nibbles and, for
// IQ4_XS, the six-bit sub-block scales.
// `importance` (super_block_size values, or null) weights each value's
// error as the reference does with an importance matrix.
void quantize_iq4_superblock(int super_block_size, const float* x, uint16_t* dh, uint8_t* q4,
                             uint16_t* scales_h, uint8_t* scales_l, const float* importance = nullptr);

// The reference quantizer of a type (nullptr when there is none).
using RowQuantizer = void (*)(const float*, void*, int64_t);
RowQuantizer reference_quantizer(DType type);

// Per-format row functions (n a multiple of the block size).
void dequantize_q4_0(const void* src, float* y, int64_t n);
void dequantize_q4_1(const void* src, float* y, int64_t n);
void dequantize_q5_0(const void* src, float* y, int64_t n);
void dequantize_q5_1(const void* src, float* y, int64_t n);
void dequantize_q8_0(const void* src, float* y, int64_t n);
void dequantize_iq4_nl(const void* src, float* y, int64_t n);
void dequantize_q2_k(const void* src, float* y, int64_t n);
void dequantize_q3_k(const void* src, float* y, int64_t n);
void dequantize_q4_k(const void* src, float* y, int64_t n);
void dequantize_q5_k(const void* src, float* y, int64_t n);
void dequantize_q6_k(const void* src, float* y, int64_t n);
void dequantize_q8_k(const void* src, float* y, int64_t n);
void dequantize_iq4_xs(const void* src, float* y, int64_t n);

void quantize_q4_0(const float* x, void* dst, int64_t n);
void quantize_q4_1(const float* x, void* dst, int64_t n);
void quantize_q5_0(const float* x, void* dst, int64_t n);
void quantize_q5_1(const float* x, void* dst, int64_t n);
void quantize_iq4_nl(const float* x, void* dst, int64_t n);
void dequantize_mxfp4(const void* src, float* y, int64_t n);
void quantize_mxfp4(const float* x, void* dst, int64_t n);
// MXFP4 weights against Q8_0 activations (the scalar oracle).
float dot_mxfp4_scalar(int64_t n, const void* w, const void* a);
void quantize_q2_k(const float* x, void* dst, int64_t n);
// The formats whose scale search dominates, with the search passed in.
void quantize_q2_k_with(const float* x, void* dst, int64_t n, Qkx2Fn search);
void quantize_q4_k_with(const float* x, void* dst, int64_t n, Qkx2Fn search);
void quantize_q5_k_with(const float* x, void* dst, int64_t n, Qkx2Fn search);
void quantize_q6_k_with(const float* x, void* dst, int64_t n, QxFn search);
void quantize_q3_k(const float* x, void* dst, int64_t n);
void quantize_q4_k(const float* x, void* dst, int64_t n);
void quantize_q5_k(const float* x, void* dst, int64_t n);
void quantize_q6_k(const float* x, void* dst, int64_t n);
void quantize_iq4_xs(const float* x, void* dst, int64_t n);

// Unpacks the six-bit scale and min of sub-block j (0..7) of a Q4_K/Q5_K block.
static inline void scale_min_k4(int j, const uint8_t* q, uint8_t* d, uint8_t* m) {
  if (j < 4) {
    *d = q[j] & 63;
    *m = q[j + 4] & 63;
  } else {
    *d = static_cast<uint8_t>((q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4));
    *m = static_cast<uint8_t>((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
  }
}

// Signed six-bit scale of sub-block j (0..15) of a Q3_K block, -32..31.
static inline int q3k_scale(const uint8_t* s, int j) {
  const int low = j < 8 ? (s[j] & 0xF) : (s[j - 8] >> 4);
  const int high = (s[8 + j % 4] >> (2 * (j / 4))) & 3;
  return (low | (high << 4)) - 32;
}

// Six-bit scale of sub-block ib (0..7) of an IQ4_XS block, -32..31.
static inline int iq4xs_scale(const BlockIQ4_XS& b, int ib) {
  const int low = (b.scales_l[ib / 2] >> (4 * (ib % 2))) & 0xF;
  const int high = (b.scales_h >> (2 * ib)) & 3;
  return (low | (high << 4)) - 32;
}

}  // namespace hearth::quant::detail
