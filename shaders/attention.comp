#version 450
// Causal attention over a paged F16 (or, with KV_Q8_0, Q8_0: head_dim / 32
// blocks of 17 16-bit words per row) KV cache with an online softmax: the
// visible positions are visited in tiles of WG_SIZE, the running max and sum
// rescale the partial output, so scores never need a full-length buffer.
// One workgroup per (query head, query token); invocation t scores position
// tile+t, then accumulates output dim pairs (2t, 2t+1), (2(t+WG_SIZE), ...)
// (head_dim <= 8 * WG_SIZE). F16 rows are read 8 halves (K) and 2 halves (V)
// per load where head_dim allows: loads are what CPU devices pay for. In a
// batch of several sequences each query token reads its own sequence's block
// table (token_seq, table_stride: params.h), so it sees only that sequence's
// keys, causally by its position. With n_splits > 1 (long contexts, few
// queries: flash decoding) workgroup z covers one slice of the positions and
// writes partial results that attention_combine.comp merges, so a long
// context spreads over n_heads * n_tokens * n_splits workgroups.
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
layout(std430, binding = 6) readonly buffer Sinks { float sinks[]; };  // [n_heads] when has_sinks
layout(std430, binding = 7) readonly buffer Seq { int token_seq[]; };  // [n_tokens] when table_stride > 0
#ifndef KV_Q8_0
// Wider views of the F16 cache: with head_dim % 8 == 0 every row starts on
// 16 bytes, so K is read 8 halves per load and V 2 halves per load.
layout(std430, binding = 1) readonly buffer K4 { uvec4 kc4[]; };
layout(std430, binding = 2) readonly buffer V2 { uint vc2[]; };
#endif

const uint MAX_DIMS_PER_INVOCATION = 8u;
const uint V_BATCH = 8u;  // V rows loaded together (see the tile loop)
const uint MAX_HEAD_DIM = 256u;
shared vec4 q4_sh[MAX_HEAD_DIM / 4u];
#define q_sh(d) q4_sh[(d) / 4u][(d) % 4u]
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
      sb += q_sh(32u * b + 2u * l) * float(sext8(w & 0xFFu)) + q_sh(32u * b + 2u * l + 1u) * float(sext8(w >> 8));
    }
    s += h2f(kc[rb]) * sb;
  }
  return s;
}
#else
uint row_units() { return p.head_dim; }
float k_dot(uint row) {
  float s = 0.0;
  if (p.head_dim % 32u == 0u) {
    // Four 16-byte loads in flight before the first is used (as for V in
    // the tile loop); the sums keep the order of the plain loop below.
    for (uint i = 0u; i < p.head_dim / 8u; i += 4u) {
      uvec4 w[4];
      for (uint u = 0u; u < 4u; ++u) w[u] = kc4[row / 8u + i + u];
      for (uint u = 0u; u < 4u; ++u) {
        const vec4 lo = vec4(unpackHalf2x16(w[u].x), unpackHalf2x16(w[u].y));
        const vec4 hi = vec4(unpackHalf2x16(w[u].z), unpackHalf2x16(w[u].w));
        s += dot(lo, q4_sh[2u * (i + u)]) + dot(hi, q4_sh[2u * (i + u) + 1u]);
      }
    }
  } else if (p.head_dim % 8u == 0u) {
    for (uint i = 0u; i < p.head_dim / 8u; ++i) {
      const uvec4 w = kc4[row / 8u + i];
      const vec4 lo = vec4(unpackHalf2x16(w.x), unpackHalf2x16(w.y));
      const vec4 hi = vec4(unpackHalf2x16(w.z), unpackHalf2x16(w.w));
      s += dot(lo, q4_sh[2u * i]) + dot(hi, q4_sh[2u * i + 1u]);
    }
  } else {
    for (uint d = 0u; d < p.head_dim; ++d) s += q_sh(d) * h2f(kc[row + d]);
  }
  return s;
}
#endif
// V of dims d and d + 1 (d even) at a cache row.
vec2 v_pair(uint row, uint d) {
#ifdef KV_Q8_0
  const uint rb = row + 17u * (d / 32u);
  const uint w = uint(vc[rb + 1u + (d % 32u) / 2u]);
  return h2f(vc[rb]) * vec2(sext8(w & 0xFFu), sext8(w >> 8));
#else
  return (p.head_dim % 2u == 0u) ? unpackHalf2x16(vc2[(row + d) / 2u])
                                 : vec2(h2f(vc[row + d]), d + 1u < p.head_dim ? h2f(vc[row + d + 1u]) : 0.0);
#endif
}

void main() {
  const uint head = gl_WorkGroupID.x, token = gl_WorkGroupID.y;
  const uint tid = gl_LocalInvocationID.x;
  const uint kv_head = head / (p.n_heads / p.n_kv_heads);
  const uint qb = (token * p.n_heads + head) * p.head_dim;
  for (uint d = tid; d < p.head_dim; d += WG_SIZE) q_sh(d) = q[qb + d];

  const uint last = uint(positions[token]);
  const uint table = p.table_stride > 0u ? uint(token_seq[token]) * p.table_stride : 0u;
  const uint visible_first = (p.window > 0u && last + 1u > p.window) ? last + 1u - p.window : 0u;
  const uint split = gl_WorkGroupID.z;
  // This split's positions [first, end): the positions this query sees now,
  // cut into n_splits equal slices, so a short conversation spreads over
  // the slices too instead of filling the first (slices of the whole table
  // left one workgroup walking every position: 96 us per layer at 512
  // positions on an H200). An empty slice leaves m, l and acc at their
  // start values, which the combine pass weighs as zero.
  const uint per = (last + 1u - visible_first + p.n_splits - 1u) / p.n_splits;
  const uint first = visible_first + split * per;
  const uint end = p.n_splits > 1u ? min(last + 1u, first + per) : last + 1u;
  barrier();

  float m = -3.402823466e38, l = 0.0;
  // Output dims in pairs: invocation tid owns dims 2 * (tid + j * WG_SIZE) and the next.
  const uint PAIRS = MAX_DIMS_PER_INVOCATION / 2u;
  vec2 acc[PAIRS];
  for (uint j = 0u; j < PAIRS; ++j) acc[j] = vec2(0.0);

  for (uint t0 = first; t0 < end; t0 += WG_SIZE) {
    const uint pos = t0 + tid;
    float s = -3.402823466e38;
    if (pos < end) {
      const uint phys = uint(block_table[table + pos / p.block_tokens]);
      const uint row = ((phys * p.n_kv_heads + kv_head) * p.block_tokens + pos % p.block_tokens) * row_units();
      row_sh[tid] = row;
      s = k_dot(row) * p.scale;
      if (p.softcap > 0.0) s = p.softcap * tanh(s / p.softcap);
    }
    const float m_new = max(m, workgroup_max(s));
    const float pr = pos < end ? exp(s - m_new) : 0.0;
    const float corr = exp(m - m_new);
    l = l * corr + workgroup_sum(pr);
    p_sh[tid] = pr;
    barrier();
    const uint tile_len = min(WG_SIZE, end - t0);
    for (uint j = 0u; j < PAIRS; ++j) {
      const uint d = 2u * (tid + j * WG_SIZE);
      if (d >= p.head_dim) break;
      vec2 a = acc[j] * corr;
      // Eight V loads issued before any is used: one at a time, each waited
      // for its memory latency, a tile of 32 positions took about 10 us on
      // an H200. The sums keep their order, so the result is the same.
      uint t = 0u;
      for (; t + V_BATCH <= tile_len; t += V_BATCH) {
        vec2 v[V_BATCH];
        for (uint u = 0u; u < V_BATCH; ++u) v[u] = v_pair(row_sh[t + u], d);
        for (uint u = 0u; u < V_BATCH; ++u) a += p_sh[t + u] * v[u];
      }
      for (; t < tile_len; ++t) a += p_sh[t] * v_pair(row_sh[t], d);
      acc[j] = a;
    }
    barrier();
    m = m_new;
  }
  if (p.n_splits > 1u) {
    const uint pb = ((token * p.n_heads + head) * p.n_splits + split) * (p.head_dim + 2u);
    for (uint j = 0u; j < PAIRS; ++j) {
      const uint d = 2u * (tid + j * WG_SIZE);
      if (d < p.head_dim) outv[pb + d] = acc[j].x;
      if (d + 1u < p.head_dim) outv[pb + d + 1u] = acc[j].y;
    }
    if (tid == 0u) {
      outv[pb + p.head_dim] = m;
      outv[pb + p.head_dim + 1u] = l;
    }
    return;
  }
  if (p.has_sinks != 0u) {
    // The sink joins the softmax: a logit with no value (m is the same in
    // every invocation, so all take the same branch).
    const float sink = sinks[head];
    if (sink > m) {
      const float c = exp(m - sink);
      for (uint j = 0u; j < PAIRS; ++j) acc[j] *= c;
      l = l * c + 1.0;
    } else {
      l += exp(sink - m);
    }
  }
  for (uint j = 0u; j < PAIRS; ++j) {
    const uint d = 2u * (tid + j * WG_SIZE);
    if (d < p.head_dim) outv[qb + d] = acc[j].x / l;
    if (d + 1u < p.head_dim) outv[qb + d + 1u] = acc[j].y / l;
  }
}
