#version 450
// Writes new K and V rows into the paged cache. F16: one invocation per
// value. KV_Q8_0: one invocation per 32-value block, quantized as the CPU's
// Q8_0 (d = max|x| / 127 stored as f16, q = round-half-away(x / d)); a row
// is head_dim / 32 blocks of 17 16-bit words. Token t writes through its
// sequence's block table (token_seq, table_stride: params.h), so one
// dispatch serves a batch of several sequences.
#include "hearth/shaders/common.glsl"
#include "hearth/shaders/params.h"

layout(push_constant) uniform Push { KvStoreParams p; };
layout(std430, binding = 0) readonly buffer Kin { float k_in[]; };
layout(std430, binding = 1) readonly buffer Vin { float v_in[]; };
layout(std430, binding = 2) buffer K { uint16_t kc[]; };
layout(std430, binding = 3) buffer V { uint16_t vc[]; };
layout(std430, binding = 4) readonly buffer Table { int block_table[]; };
layout(std430, binding = 5) readonly buffer Pos { int positions[]; };
layout(std430, binding = 6) readonly buffer Seq { int token_seq[]; };  // [n_tokens] when table_stride > 0

// The cache row (in rows, not storage units) of token t's KV head h.
uint cache_row(uint t, uint h) {
  const uint pos = uint(positions[t]);
  const uint table = p.table_stride > 0u ? uint(token_seq[t]) * p.table_stride : 0u;
  const uint phys = uint(block_table[table + pos / p.block_tokens]);
  return (phys * p.n_kv_heads + h) * p.block_tokens + pos % p.block_tokens;
}

#ifdef KV_Q8_0
// C's roundf: halves away from zero (GLSL round() leaves halves open).
int round_away(float x) { return int(sign(x) * floor(abs(x) + 0.5)); }

void main() {
  const uint blocks = p.head_dim / 32u;
  const uint i = flat_index();
  if (i >= p.n_tokens * p.n_kv_heads * blocks) return;
  const uint b = i % blocks;
  const uint h = (i / blocks) % p.n_kv_heads;
  const uint t = i / (blocks * p.n_kv_heads);
  const uint src = (t * p.n_kv_heads + h) * p.head_dim + 32u * b;
  const uint dst = cache_row(t, h) * blocks * 17u + 17u * b;
  for (uint which = 0u; which < 2u; ++which) {
    float v[32];
    float amax = 0.0;
    for (uint j = 0u; j < 32u; ++j) {
      v[j] = which == 0u ? k_in[src + j] : v_in[src + j];
      amax = max(amax, abs(v[j]));
    }
    const float d = amax / 127.0;
    const float id = d != 0.0 ? 1.0 / d : 0.0;
    const uint dh = packHalf2x16(vec2(d, 0.0)) & 0xFFFFu;
    if (which == 0u) kc[dst] = uint16_t(dh); else vc[dst] = uint16_t(dh);
    for (uint l = 0u; l < 16u; ++l) {
      const uint q0 = uint(round_away(v[2u * l] * id)) & 0xFFu;
      const uint q1 = uint(round_away(v[2u * l + 1u] * id)) & 0xFFu;
      const uint w = q0 | (q1 << 8);
      if (which == 0u) kc[dst + 1u + l] = uint16_t(w); else vc[dst + 1u + l] = uint16_t(w);
    }
  }
}
#else
void main() {
  const uint i = flat_index();
  if (i >= p.n_tokens * p.n_kv_heads * p.head_dim) return;
  const uint d = i % p.head_dim;
  const uint h = (i / p.head_dim) % p.n_kv_heads;
  const uint t = i / (p.head_dim * p.n_kv_heads);
  const uint row = cache_row(t, h) * p.head_dim;
  kc[row + d] = uint16_t(packHalf2x16(vec2(k_in[i], 0.0)) & 0xFFFFu);
  vc[row + d] = uint16_t(packHalf2x16(vec2(v_in[i], 0.0)) & 0xFFFFu);
}
#endif
