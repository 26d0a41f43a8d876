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
layout(push_constant) uniform Push { MatvecParams p; };
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

// This invocation's share of row `row`: lane `lane` of `lanes`.
float row_partial(uint row, uint lane, uint lanes) {
  const uint base = row * p.row_stride;
  float sum = 0.0;
#ifdef TYPE_PLAIN
  for (uint c = lane; c < p.ncols; c += lanes) sum += load_elem(base + c) * x[c];
#else
  const uint nchunks = p.ncols / 32u;
  for (uint c = lane; c < nchunks; c += lanes) {
    sum += chunk_dot(base + (c / CHUNKS_PER_BLOCK) * BLOCK_U16, c % CHUNKS_PER_BLOCK, c * 32u);
  }
#endif
  return sum;
}

void main() {
#ifdef USE_SUBGROUPS
  const uint first = flat_group() * ROWS_PER_WG;
  for (uint r = gl_SubgroupID; r < ROWS_PER_WG; r += gl_NumSubgroups) {
    const uint row = first + r;
    if (row >= p.nrows) break;  // uniform across the subgroup
    const float sum = subgroupAdd(row_partial(row, gl_SubgroupInvocationID, gl_SubgroupSize));
    if (subgroupElect()) y[row] = sum;
  }
#else
  const uint row = flat_group();
  if (row >= p.nrows) return;  // uniform across the workgroup
  const uint tid = gl_LocalInvocationID.x;
  const float sum = workgroup_sum(row_partial(row, tid, WG_SIZE));
  if (tid == 0u) y[row] = sum;
#endif
}
