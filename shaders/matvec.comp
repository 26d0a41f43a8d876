#version 450
// y = W x for MV_COLS activation vectors (spec constant 2, 1..MAX_COLS): a
// decode step (one column) or a few tokens at once (a speculative verify
// pass, a short prompt). Invocations stride over 32-value chunks of a row;
// each chunk's weights are read and decoded once for all columns, and every
// column then runs exactly the arithmetic and reduction order of a
// one-column pass, so column j of y is bit for bit the one-token result.
// x: [MV_COLS][ncols], y: [MV_COLS][nrows] (+ bias[row]) (+ residual, y's shape).
//
// INT_DOT: x arrives as 8-bit blocks (quantize_q8.comp) and each chunk is
// a few packed integer dot products (chunk_dot_int.glsl).
//
// USE_SUBGROUPS: each subgroup owns rows (ROWS_PER_WG per workgroup, spec
// constant 1) and reduces with subgroupAdd: no shared memory, no barriers.
// Otherwise: one row per workgroup with a shared-memory tree reduction.
#ifdef USE_SUBGROUPS
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#else
#define NEEDS_REDUCE
#endif
#include "hearth/shaders/common.glsl"
#include "hearth/shaders/params.h"
#include "hearth/shaders/weight_buffer.glsl"

layout(constant_id = 1) const uint ROWS_PER_WG = 1;
layout(constant_id = 2) const uint MV_COLS = 1;  // 1..MAX_COLS, checked by the host
const uint MAX_COLS = 8u;
#ifdef MATVEC_ID
// Products by expert id: workgroup row y is one (token, expert) slot.
layout(push_constant) uniform Push { MatvecIdParams p; };
layout(std430, binding = 3) readonly buffer Ids { int ids[]; };
#else
layout(push_constant) uniform Push { MatvecParams p; };
#endif
layout(std430, binding = 2) writeonly buffer Y { float y[]; };
#ifdef MATVEC_ID
float with_addends(float sum, uint row, uint at) { return sum; }
#else
// A product's bias (Qwen's Q/K/V) and the residual add after it (fused by
// graph_fusion.h) join the sum where it is written: the same roundings as
// the separate adds, without their dispatches and barriers.
layout(std430, binding = 3) readonly buffer Bias { float bias[]; };
layout(std430, binding = 4) readonly buffer Residual { float residual[]; };
float with_addends(float sum, uint row, uint at) {
  const float biased = p.bias != 0u ? sum + bias[row] : sum;
  return p.residual != 0u ? biased + residual[at] : biased;
}
#endif
#ifdef INT_DOT
layout(std430, binding = 1) readonly buffer Codes { uvec4 codes4[]; };
layout(std430, binding = 1) readonly buffer Scales { vec2 scales[]; };
#else
layout(std430, binding = 1) readonly buffer X { float x[]; };
// Wider views of the same bindings for 16-byte loads (see chunk_dot.glsl);
// x is 16-byte aligned (binding offsets are) and ncols a multiple of 32.
#ifndef TYPE_PLAIN
layout(std430, binding = 1) readonly buffer X128 { vec4 x4[]; };
#endif
#endif
#if defined(TYPE_Q4_K) || (defined(INT_DOT) && defined(TYPE_Q5_K))
layout(std430, binding = 0) readonly buffer Weights128 { uvec4 w128[]; };
#endif
#ifdef INT_DOT
#include "hearth/shaders/chunk_dot_int.glsl"
#else
#include "hearth/shaders/chunk_dot.glsl"
#endif

// This invocation's share of row `row` for every column, added to sums:
// lane `lane` of `lanes`. The weights start `wbase` storage units in, column
// 0 of x at float `xoff` (column j at xoff + j * ncols).
void row_partial(uint row, uint lane, uint lanes, uint wbase, uint xoff, inout float sums[MAX_COLS]) {
  const uint base = wbase + row * p.row_stride;
#ifdef TYPE_PLAIN
  for (uint c = lane; c < p.ncols; c += lanes) {
    const float w = load_elem(base + c);
    for (uint col = 0u; col < MV_COLS; ++col) sums[col] += w * x[xoff + col * p.ncols + c];
  }
#else
  const uint nchunks = p.ncols / 32u;
  for (uint c = lane; c < nchunks; c += lanes) {
#ifdef INT_DOT
    chunk_dot_int(base + (c / CHUNKS_PER_BLOCK) * BLOCK_U16, c % CHUNKS_PER_BLOCK, c, xoff / p.ncols, sums);
#else
    chunk_dot(base + (c / CHUNKS_PER_BLOCK) * BLOCK_U16, c % CHUNKS_PER_BLOCK, xoff + c * 32u, p.ncols, sums);
#endif
  }
#endif
}

void main() {
#ifdef MATVEC_ID
  const uint slot = gl_WorkGroupID.y;
  // The binding holds experts [expert_begin, expert_begin + expert_count):
  // a slot routed elsewhere is another dispatch's (uniform per workgroup).
  const int local = ids[slot] - int(p.expert_begin);
  if (local < 0 || local >= int(p.expert_count)) return;
  const uint wbase = uint(local) * p.expert_stride;
  const uint xoff = (p.x_per_slot != 0u ? slot : slot / p.k) * p.ncols;
  const uint yoff = slot * p.nrows;
  const uint group = gl_WorkGroupID.x;
#else
  const uint wbase = 0u, xoff = 0u, yoff = 0u;
  const uint group = flat_group();
#endif
  float sums[MAX_COLS];
#ifdef USE_SUBGROUPS
  const uint first = group * ROWS_PER_WG;
  for (uint r = gl_SubgroupID; r < ROWS_PER_WG; r += gl_NumSubgroups) {
    const uint row = first + r;
    if (row >= p.nrows) break;  // uniform across the subgroup
    for (uint col = 0u; col < MAX_COLS; ++col) sums[col] = 0.0;
    row_partial(row, gl_SubgroupInvocationID, gl_SubgroupSize, wbase, xoff, sums);
    for (uint col = 0u; col < MV_COLS; ++col) {
      const float sum = subgroupAdd(sums[col]);
      const uint at = yoff + col * p.nrows + row;
      if (subgroupElect()) y[at] = with_addends(sum, row, at);
    }
  }
#else
  const uint row = group;
  if (row >= p.nrows) return;  // uniform across the workgroup
  const uint tid = gl_LocalInvocationID.x;
  for (uint col = 0u; col < MAX_COLS; ++col) sums[col] = 0.0;
  row_partial(row, tid, WG_SIZE, wbase, xoff, sums);
  for (uint col = 0u; col < MV_COLS; ++col) {
    const float sum = workgroup_sum(sums[col]);
    const uint at = yoff + col * p.nrows + row;
    if (tid == 0u) y[at] = with_addends(sum, row, at);
  }
#endif
}
