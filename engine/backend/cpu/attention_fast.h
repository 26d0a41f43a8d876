// The AVX-512 attention (attention_avx512.cpp), compiled only for x86-64 and
// called only when the kernel table reached the Avx512 level.
#pragma once

#include <hearth/engine/backend/graph.h>

#include "thread_pool.h"

namespace hearth::backend::cpu {

// Whether attention_avx512 covers this op: F16, F32 or Q8_0 cache, head_dim
// a multiple of 32, whole query groups per KV head.
bool attention_avx512_handles(const AttentionParams& p, const KvView& kv);
// The same result as op_attention's scalar path (up to float rounding).
void attention_avx512(const Node& n, ThreadPool& pool);

}  // namespace hearth::backend::cpu
