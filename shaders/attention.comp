#version 450
// Causal attention over a paged F16 (or, with KV_Q8_0, Q8_0: head_dim / 32
// blocks of 17 16-bit words per row) KV cache with an online softmax: the
// visible positions are visited in tiles of WG_SIZE, the running max and sum
// rescale the partial output, so scores never need a full-length buffer.
// One workgroup per (query head, query token); invocation t scores position
// tile+t, then accumulates output dims t, t+WG_SIZE, ... (head_dim <= 8 * WG_SIZE).
#define NEEDS_REDUCE
#include "hearth/shaders/common.glsl"
#include "hearth/shaders/params.h"

layout(push_constant) uniform Push { AttentionParams p; };
layout(std430, binding = 0) readonly buffer Q { float q[]; };
layout(std430, binding = 1) readonly buffer K { uint16_t kc[]; };
layout(std430, binding = 2) readonly buffer V { uint16_t vc[]; };
layout(std430, binding = 3) readonly buffer Table { int block_table[]; };
layout(std430, binding = 4) readonly buffer Pos { int positions[]; };
layout(std430, binding = 5) writeonly buffer O { float outv[]; };

const uint MAX_DIMS_PER_INVOCATION = 8u;
const uint MAX_HEAD_DIM = 256u;
shared float q_sh[MAX_HEAD_DIM];
shared float p_sh[WG_SIZE];
shared uint row_sh[WG_SIZE];  // cache row of each position in the tile

#define h2f(v) unpackHalf2x16(uint(v)).x

#ifdef KV_Q8_0
int sext8(uint b) { return int(b << 24) >> 24; }
uint row_units() { return p.head_dim / 32u * 17u; }
// q . K[row], block by block: the scale is applied once per 32 values.
float k_dot(uint row) {
  float s = 0.0;
  for (uint b = 0u; b < p.head_dim / 32u; ++b) {
    const uint rb = row + 17u * b;
    float sb = 0.0;
    for (uint l = 0u; l < 16u; ++l) {
      const uint w = uint(kc[rb + 1u + l]);
      sb += q_sh[32u * b + 2u * l] * float(sext8(w & 0xFFu)) + q_sh[32u * b + 2u * l + 1u] * float(sext8(w >> 8));
    }
    s += h2f(kc[rb]) * sb;
  }
  return s;
}
float v_at(uint row, uint d) {
  const uint rb = row + 17u * (d / 32u);
  const uint j = d % 32u;
  const uint w = uint(vc[rb + 1u + j / 2u]);
  return h2f(vc[rb]) * float(sext8((w >> (8u * (j & 1u))) & 0xFFu));
}
#else
uint row_units() { return p.head_dim; }
float k_dot(uint row) {
  float s = 0.0;
  for (uint d = 0u; d < p.head_dim; ++d) s += q_sh[d] * h2f(kc[row + d]);
  return s;
}
float v_at(uint row, uint d) { return h2f(vc[row + d]); }
#endif

void main() {
  const uint head = gl_WorkGroupID.x, token = gl_WorkGroupID.y;
  const uint tid = gl_LocalInvocationID.x;
  const uint kv_head = head / (p.n_heads / p.n_kv_heads);
  const uint qb = (token * p.n_heads + head) * p.head_dim;
  for (uint d = tid; d < p.head_dim; d += WG_SIZE) q_sh[d] = q[qb + d];

  const uint last = uint(positions[token]);
  const uint first = (p.window > 0u && last + 1u > p.window) ? last + 1u - p.window : 0u;
  barrier();

  float m = -3.402823466e38, l = 0.0;
  float acc[MAX_DIMS_PER_INVOCATION];
  for (uint j = 0u; j < MAX_DIMS_PER_INVOCATION; ++j) acc[j] = 0.0;

  for (uint t0 = first; t0 <= last; t0 += WG_SIZE) {
    const uint pos = t0 + tid;
    float s = -3.402823466e38;
    if (pos <= last) {
      const uint phys = uint(block_table[pos / p.block_tokens]);
      const uint row = ((phys * p.n_kv_heads + kv_head) * p.block_tokens + pos % p.block_tokens) * row_units();
      row_sh[tid] = row;
      s = k_dot(row) * p.scale;
      if (p.softcap > 0.0) s = p.softcap * tanh(s / p.softcap);
    }
    const float m_new = max(m, workgroup_max(s));
    const float pr = pos <= last ? exp(s - m_new) : 0.0;
    const float corr = exp(m - m_new);
    l = l * corr + workgroup_sum(pr);
    p_sh[tid] = pr;
    barrier();
    const uint tile_len = min(WG_SIZE, last + 1u - t0);
    for (uint j = 0u; j < MAX_DIMS_PER_INVOCATION; ++j) {
      const uint d = tid + j * WG_SIZE;
      if (d >= p.head_dim) break;
      float a = acc[j] * corr;
      for (uint t = 0u; t < tile_len; ++t) a += p_sh[t] * v_at(row_sh[t], d);
      acc[j] = a;
    }
    barrier();
    m = m_new;
  }
  for (uint j = 0u; j < MAX_DIMS_PER_INVOCATION; ++j) {
    const uint d = tid + j * WG_SIZE;
    if (d < p.head_dim) outv[qb + d] = acc[j] / l;
  }
}
