// Avx2 kernels: the shared 256-bit implementation compiled for this level
// (see dot_x86_256.inc; compile flags are set per file in CMakeLists.txt).
#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "hearth/engine/quant/blocks.h"
#include "hearth/engine/quant/fp16.h"
#include "kernels_internal.h"
#include "ref_internal.h"

#define HEARTH_VNNI_MODE 0
#define HEARTH_FILL_FN fill_avx2
#define HEARTH_LEVEL KernelLevel::Avx2

namespace hearth::quant::detail {
namespace avx2 {
#include "dot_x86_256.inc"
}  // namespace avx2

void fill_avx2(KernelTable& t) { avx2::fill_avx2(t); }

}  // namespace hearth::quant::detail
