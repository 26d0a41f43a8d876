#version 450
// Writes new K and V rows into the paged F16 cache; one invocation per value.
#include "hearth/shaders/common.glsl"
#include "hearth/shaders/params.h"

layout(push_constant) uniform Push { KvStoreParams p; };
layout(std430, binding = 0) readonly buffer Kin { float k_in[]; };
layout(std430, binding = 1) readonly buffer Vin { float v_in[]; };
layout(std430, binding = 2) buffer K { uint16_t kc[]; };
layout(std430, binding = 3) buffer V { uint16_t vc[]; };
layout(std430, binding = 4) readonly buffer Table { int block_table[]; };
layout(std430, binding = 5) readonly buffer Pos { int positions[]; };

void main() {
  const uint i = flat_index();
  if (i >= p.n_tokens * p.n_kv_heads * p.head_dim) return;
  const uint d = i % p.head_dim;
  const uint h = (i / p.head_dim) % p.n_kv_heads;
  const uint t = i / (p.head_dim * p.n_kv_heads);
  const uint pos = uint(positions[t]);
  const uint phys = uint(block_table[pos / p.block_tokens]);
  const uint row = ((phys * p.n_kv_heads + h) * p.block_tokens + pos % p.block_tokens) * p.head_dim;
  kc[row + d] = uint16_t(packHalf2x16(vec2(k_in[i], 0.0)) & 0xFFFFu);
  vc[row + d] = uint16_t(packHalf2x16(vec2(v_in[i], 0.0)) & 0xFFFFu);
}
