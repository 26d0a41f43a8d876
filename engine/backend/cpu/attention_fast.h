// The vector attention kernels (attention_simd.inc). On x86-64:
// attention_avx512.cpp, called only when the kernel table reached the Avx512
// level, and attention_avx2.cpp, at the Avx2 and AvxVnni levels. On aarch64:
// attention_neon.cpp at the Neon and NeonDotprod levels. Each exists only on
// its architecture.
#pragma once

#include <hearth/engine/backend/graph.h>

#include "thread_pool.h"

namespace hearth::backend::cpu {

// Whether attention_avx512 covers this op: F16, F32 or Q8_0 cache, head_dim
// a multiple of 32, whole query groups per KV head.
bool attention_avx512_handles(const AttentionParams& p, const KvView& kv);
// The same result as op_attention's scalar path (up to float rounding).
void attention_avx512(const Node& n, ThreadPool& pool);
// The same with 8 lanes (AVX2 + FMA + F16C).
bool attention_avx2_handles(const AttentionParams& p, const KvView& kv);
void attention_avx2(const Node& n, ThreadPool& pool);
// The same with 4 lanes (NEON).
bool attention_neon_handles(const AttentionParams& p, const KvView& kv);
void attention_neon(const Node& n, ThreadPool& pool);

}  // namespace hearth::backend::cpu
