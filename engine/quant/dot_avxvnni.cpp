// AvxVnni kernels: the shared 256-bit implementation compiled for this level
// (see dot_x86_256.inc; compile flags are set per file in CMakeLists.txt).
#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "hearth/engine/quant/blocks.h"
#include "hearth/engine/quant/fp16.h"
#include "kernels_internal.h"
#include "ref_internal.h"

#define HEARTH_VNNI_MODE 1
#define HEARTH_FILL_FN fill_avxvnni
#define HEARTH_LEVEL KernelLevel::AvxVnni

namespace hearth::quant::detail {
namespace avxvnni {
#include "dot_x86_256.inc"
}  // namespace avxvnni

void fill_avxvnni(KernelTable& t) { avxvnni::fill_avxvnni(t); }

}  // namespace hearth::quant::detail
