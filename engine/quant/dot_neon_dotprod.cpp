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

#include "dot_neon_kernels.inc"
#include "dot_neon_rows.inc"

}  // namespace

void fill_neon_dotprod(KernelTable& table) {
  fill_neon_level(table, KernelLevel::NeonDotprod);
  fill_neon_rows(table);
}

}  // namespace hearth::quant::detail
