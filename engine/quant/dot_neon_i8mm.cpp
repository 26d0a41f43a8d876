// The `neon-i8mm` kernel level: the dot-product level's kernels, and prompt
// tiles on the int8 matrix multiply (SMMLA: a 2 x 8 by 8 x 2 int8 product
// added into a 2 x 2 int32 accumulator, 32 multiply-adds per instruction
// against SDOT's 16). Compiled for Armv8.2-A + DotProd + I8MM
// (CMakeLists.txt) and used only where the kernel reports HWCAP2_I8MM.
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
// (dot_neon_prefill.inc): one SMMLA, lanes [r0.t0, r0.t1, r1.t0, r1.t1].
struct PairAcc {
  using Operand = int8x16_t;
  static Operand operand(int8x16_t a) { return a; }
  void add(int8x16_t w, Operand a) { acc = vmmlaq_s32(acc, w, a); }
  int32x4_t total() const { return acc; }
  int32x4_t acc = vdupq_n_s32(0);
};

#include "dot_neon_prefill.inc"

}  // namespace

void fill_neon_i8mm(KernelTable& table) {
  fill_neon_level(table, KernelLevel::NeonI8mm);
  fill_neon_rows(table);
  fill_neon_rows_k_multi(table);
  fill_neon_prefill(table);
}

}  // namespace hearth::quant::detail
