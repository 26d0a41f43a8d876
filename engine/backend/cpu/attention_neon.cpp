// Attention with NEON (4 lanes), for aarch64 CPUs (every one has NEON) at the
// Neon and NeonDotprod kernel levels. The kernel is attention_simd.inc.
#include <arm_neon.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <memory>
#include <type_traits>
#include <vector>

#include <hearth/engine/quant/blocks.h>
#include <hearth/engine/quant/fp16.h>

#include "attention_fast.h"
#include "ops.h"

namespace hearth::backend::cpu {
namespace {

#include <hearth/engine/quant/isa_buffer.inc>

#include "attention_tiles.inc"

#include "simd_neon.inc"
#include "simd_math.inc"
#include "attention_simd.inc"

}  // namespace

bool attention_neon_handles(const AttentionParams& p, const KvView& kv) { return simd_attention_handles(p, kv); }

void attention_neon(const Node& n, ThreadPool& pool) { run_attention<Neon4>(n, pool); }

}  // namespace hearth::backend::cpu
