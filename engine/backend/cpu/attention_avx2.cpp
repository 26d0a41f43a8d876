// Attention with AVX2 + FMA + F16C (8 lanes), for CPUs whose kernel table
// reached the Avx2 or AvxVnni level (most laptops). Compiled with those
// flags; only called after that check. The kernel is attention_simd.inc.
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

#include "simd_ymm.inc"
#include "simd_math.inc"
#include "attention_simd.inc"

}  // namespace

bool attention_avx2_handles(const AttentionParams& p, const KvView& kv) { return simd_attention_handles(p, kv); }

void attention_avx2(const Node& n, ThreadPool& pool) { run_attention<Ymm>(n, pool); }

}  // namespace hearth::backend::cpu
