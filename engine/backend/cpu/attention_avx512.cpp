// Attention with AVX-512 (16 lanes), for CPUs whose kernel table reached the
// Avx512 level. Compiled with AVX-512 flags; only called after that check, so
// the binary still runs anywhere. The kernel is attention_simd.inc.
#include <immintrin.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <memory>
#include <type_traits>
#include <vector>

#include <hearth/engine/quant/blocks.h>

#include "attention_fast.h"
#include "ops.h"

namespace hearth::backend::cpu {
namespace {

#include <hearth/engine/quant/isa_buffer.inc>

#include "attention_tiles.inc"

#include "simd_zmm.inc"
#include "simd_math.inc"
#include "attention_simd.inc"

}  // namespace

bool attention_avx512_handles(const AttentionParams& p, const KvView& kv) { return simd_attention_handles(p, kv); }

void attention_avx512(const Node& n, ThreadPool& pool) { run_attention<Zmm>(n, pool); }

}  // namespace hearth::backend::cpu
