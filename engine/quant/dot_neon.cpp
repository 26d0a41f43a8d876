// The `neon` kernel level: Advanced SIMD, which every aarch64 CPU has. The
// int8 products are widened to int16 (vmull) and pairwise-added into int32
// lanes (vpadal). Compiled for plain Armv8-A (CMakeLists.txt).
#include <arm_neon.h>

#include <algorithm>
#include <cstring>

#include "hearth/engine/quant/blocks.h"
#include "hearth/engine/quant/fp16.h"
#include "kernels_internal.h"
#include "ref_internal.h"

namespace hearth::quant::detail {
namespace {

inline int32x4_t dot16(int32x4_t acc, int8x16_t w, int8x16_t a) {
  acc = vpadalq_s16(acc, vmull_s8(vget_low_s8(w), vget_low_s8(a)));
  return vpadalq_s16(acc, vmull_high_s8(w, a));
}

#include "dot_neon_float.inc"
#include "dot_neon_kernels.inc"
#include "dot_neon_rows.inc"
#include "dot_neon_unpack_k.inc"
#include "dot_neon_rows_k_multi.inc"

}  // namespace

void fill_neon(KernelTable& table) {
  fill_neon_level(table, KernelLevel::Neon);
  fill_neon_rows(table);
  fill_neon_rows_k_multi(table);
}

}  // namespace hearth::quant::detail
