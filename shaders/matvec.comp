#version 450
// y = W x for one activation vector (decode). Invocations stride over
// 32-value chunks of a row so each weight byte is read once per token.
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
#ifdef MATVEC_ID
// Products by expert id: workgroup row y is one (token, expert) slot.
layout(push_constant) uniform Push { MatvecIdParams p; };
layout(std430, binding = 3) readonly buffer Ids { int ids[]; };
#else
layout(push_constant) uniform Push { MatvecParams p; };
#endif
layout(std430, binding = 1) readonly buffer X { float x[]; };
layout(std430, binding = 2) writeonly buffer Y { float y[]; };
// Wider views of the same bindings for 16-byte loads (see chunk_dot.glsl);
// x is 16-byte aligned (binding offsets are) and ncols a multiple of 32.
#ifndef TYPE_PLAIN
layout(std430, binding = 1) readonly buffer X128 { vec4 x4[]; };
#endif
#ifdef TYPE_Q4_K
layout(std430, binding = 0) readonly buffer Weights128 { uvec4 w128[]; };
#endif
#include "hearth/shaders/chunk_dot.glsl"

// This invocation's share of row `row`: lane `lane` of `lanes`. The
// weights start `wbase` storage units in, x at float `xoff`.
float row_partial(uint row, uint lane, uint lanes, uint wbase, uint xoff) {
  const uint base = wbase + row * p.row_stride;
  float sum = 0.0;
#ifdef TYPE_PLAIN
  for (uint c = lane; c < p.ncols; c += lanes) sum += load_elem(base + c) * x[xoff + c];
#else
  const uint nchunks = p.ncols / 32u;
  for (uint c = lane; c < nchunks; c += lanes) {
    sum += chunk_dot(base + (c / CHUNKS_PER_BLOCK) * BLOCK_U16, c % CHUNKS_PER_BLOCK, xoff + c * 32u);
  }
#endif
  return sum;
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
#ifdef USE_SUBGROUPS
  const uint first = group * ROWS_PER_WG;
  for (uint r = gl_SubgroupID; r < ROWS_PER_WG; r += gl_NumSubgroups) {
    const uint row = first + r;
    if (row >= p.nrows) break;  // uniform across the subgroup
    const float sum = subgroupAdd(row_partial(row, gl_SubgroupInvocationID, gl_SubgroupSize, wbase, xoff));
    if (subgroupElect()) y[yoff + row] = sum;
  }
#else
  const uint row = group;
  if (row >= p.nrows) return;  // uniform across the workgroup
  const uint tid = gl_LocalInvocationID.x;
  const float sum = workgroup_sum(row_partial(row, tid, WG_SIZE, wbase, xoff));
  if (tid == 0u) y[yoff + row] = sum;
#endif
}
