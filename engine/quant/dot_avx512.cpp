// AVX-512 kernels (F/BW/VL/DQ + VNNI). The 256-bit implementation is
// compiled with VNNI on 256-bit registers; 512-bit kernels then replace the
// entries where they are faster: decode dots (dot_avx512_decode.inc), direct
// tiles (dot_avx512_wide.inc) and repacked 16-row tiles for prompt
// processing (dot_avx512_packed.inc), which registers the final entries.
#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

#include "hearth/engine/quant/blocks.h"
#include "hearth/engine/quant/fp16.h"
#include "kernels_internal.h"
#include "ref_internal.h"

#define HEARTH_VNNI_MODE 2
#define HEARTH_FILL_FN fill_avx512_256
#define HEARTH_LEVEL KernelLevel::Avx512

namespace hearth::quant::detail {
namespace avx512 {
#include "dot_x86_256.inc"
#include "dot_avx512_wide.inc"
#include "dot_avx512_decode.inc"
#include "dot_avx512_packed.inc"
}  // namespace avx512

void fill_avx512(KernelTable& t) {
  avx512::fill_avx512_256(t);
  avx512::fill_avx512_wide(t);
  avx512::fill_avx512_packed(t);
}

}  // namespace hearth::quant::detail
