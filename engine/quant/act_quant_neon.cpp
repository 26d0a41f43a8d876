// NEON activation quantizers (F32 -> Q8_0 / Q8_K), byte-identical to the
// reference ones in ref_legacy.cpp: the same scale, the same rounding
// (roundf's ties away from zero for Q8_0: FCVTAS; ties to even for Q8_K:
// FCVTNS, as nearest_int) and the same first-maximum rule. The magnitude
// maximum skips NaNs (FMAXNM) as the reference's comparisons do. Built for
// plain Armv8-A with -ffp-contract=off (no fused multiply-adds the reference
// does not have); every aarch64 level uses them.
#include <arm_neon.h>

#include <cmath>
#include <cstring>

#include "hearth/engine/quant/blocks.h"
#include "hearth/engine/quant/fp16.h"
#include "kernels_internal.h"

namespace hearth::quant::detail {
namespace {

#include "act_quant_scale.inc"

// The largest magnitude of n (a multiple of 4) floats.
inline float max_magnitude(const float* x, int n) {
  float32x4_t m = vdupq_n_f32(0.0f);
  for (int k = 0; k < n; k += 4) m = vmaxnmq_f32(m, vabsq_f32(vld1q_f32(x + k)));
  return vmaxnmvq_f32(m);
}

// 16 int32 values within int8 range to 16 bytes, in order.
inline int8x16_t narrow16(int32x4_t a, int32x4_t b, int32x4_t c, int32x4_t d) {
  const int16x8_t lo = vcombine_s16(vmovn_s32(a), vmovn_s32(b));
  const int16x8_t hi = vcombine_s16(vmovn_s32(c), vmovn_s32(d));
  return vcombine_s8(vmovn_s16(lo), vmovn_s16(hi));
}

void quantize_q8_0_neon(const float* x, void* dst, int64_t n) {
  auto* b = static_cast<BlockQ8_0*>(dst);
  for (int64_t i = 0; i < n / kQK; ++i, x += kQK) {
    const float amax = max_magnitude(x, kQK);
    const float d = amax / 127;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    b[i].d = fp32_to_fp16(d);
    for (int k = 0; k < kQK; k += 16) {
      int32x4_t q[4];
      for (int j = 0; j < 4; ++j) q[j] = vcvtaq_s32_f32(vmulq_n_f32(vld1q_f32(x + k + 4 * j), id));
      vst1q_s8(b[i].qs + k, narrow16(q[0], q[1], q[2], q[3]));
    }
  }
}

void quantize_q8_k_neon(const float* x, void* dst, int64_t n) {
  auto* b = static_cast<BlockQ8_K*>(dst);
  for (int64_t i = 0; i < n / kQK_K; ++i, x += kQK_K) {
    const float amax = max_magnitude(x, kQK_K);
    if (!(amax > 0.0f)) {  // all zeros (or NaNs, which the reference skips)
      std::memset(&b[i], 0, sizeof(b[i]));
      continue;
    }
    const float iscale = q8_k_iscale(x, kQK_K, amax);
    for (int k = 0; k < kQK_K; k += 16) {
      int32x4_t q[4];
      for (int j = 0; j < 4; ++j) {
        q[j] = vminq_s32(vcvtnq_s32_f32(vmulq_n_f32(vld1q_f32(x + k + 4 * j), iscale)), vdupq_n_s32(127));
      }
      const int8x16_t bytes = narrow16(q[0], q[1], q[2], q[3]);
      vst1q_s8(b[i].qs + k, bytes);
      b[i].bsums[k / 16] = static_cast<int16_t>(vaddlvq_s8(bytes));
    }
    b[i].d = 1 / iscale;
  }
}

}  // namespace

void fill_act_quantizers_neon(KernelTable& table) {
  table.quantize_q8_0 = quantize_q8_0_neon;
  table.quantize_q8_k = quantize_q8_k_neon;
}

}  // namespace hearth::quant::detail
