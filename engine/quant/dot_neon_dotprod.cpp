// The `neon-dotprod` kernel level: the same kernels as dot_neon.cpp with the
// int8 dot product instruction (SDOT: four 4-byte dot products per
// instruction, accumulated in int32 lanes). Compiled for Armv8.2-A + DotProd
// (CMakeLists.txt) and used only where the kernel reports HWCAP_ASIMDDP.
#include <arm_neon.h>

#include <algorithm>
#include <cstring>

#include "hearth/engine/quant/blocks.h"
#include "hearth/engine/quant/fp16.h"
#include "kernels_internal.h"
#include "ref_internal.h"

namespace hearth::quant::detail {
namespace {

inline int32x4_t dot16(int32x4_t acc, int8x16_t w, int8x16_t a) { return vdotq_s32(acc, w, a); }

#include "dot_neon_float.inc"
#include "dot_neon_kernels.inc"
#include "dot_neon_rows.inc"
#include "dot_neon_unpack_k.inc"
#include "dot_neon_rows_k_multi.inc"

// The prompt tiles' product of a row pair and a token pair
// (dot_neon_prefill.inc) with SDOT: against the token pair as it is, lanes
// hold [r0.t0, r0.t0, r1.t1, r1.t1] (two halves each); against it with its
// halves swapped, [r0.t1, r0.t1, r1.t0, r1.t0]. A sub-block's sums are
// added pairwise and put in SMMLA's order once, in total().
struct PairAcc {
  struct Operand {
    int8x16_t same, swapped;
  };
  static Operand operand(int8x16_t a) { return {a, vextq_s8(a, a, 8)}; }
  void add(int8x16_t w, const Operand& a) {
    same = vdotq_s32(same, w, a.same);
    crossed = vdotq_s32(crossed, w, a.swapped);
  }
  int32x4_t total() const {
    static constexpr uint8_t kOrder[16] = {0, 1, 2, 3, 8, 9, 10, 11, 12, 13, 14, 15, 4, 5, 6, 7};
    const int32x4_t p = vpaddq_s32(same, crossed);  // [r0.t0, r1.t1, r0.t1, r1.t0]
    return vreinterpretq_s32_u8(vqtbl1q_u8(vreinterpretq_u8_s32(p), vld1q_u8(kOrder)));
  }
  int32x4_t same = vdupq_n_s32(0), crossed = vdupq_n_s32(0);
};

#include "dot_neon_prefill.inc"

}  // namespace

void fill_neon_dotprod(KernelTable& table) {
  fill_neon_level(table, KernelLevel::NeonDotprod);
  fill_neon_rows(table);
  fill_neon_rows_k_multi(table);
  fill_neon_prefill(table);
}

}  // namespace hearth::quant::detail
