#version 450
// y = W x for one activation vector (decode). One workgroup per output row;
// invocations stride over 32-value chunks so each weight byte is read once.
#define NEEDS_REDUCE
#include "hearth/shaders/common.glsl"
#include "hearth/shaders/params.h"
#include "hearth/shaders/weight_buffer.glsl"

layout(push_constant) uniform Push { MatvecParams p; };
layout(std430, binding = 1) readonly buffer X { float x[]; };
layout(std430, binding = 2) writeonly buffer Y { float y[]; };

void main() {
  const uint row = flat_group();
  if (row >= p.nrows) return;  // uniform across the workgroup
  const uint tid = gl_LocalInvocationID.x;
  const uint base = row * p.row_stride;
  float sum = 0.0;
#ifdef TYPE_PLAIN
  for (uint c = tid; c < p.ncols; c += WG_SIZE) sum += load_elem(base + c) * x[c];
#else
  const uint nchunks = p.ncols / 32u;
  for (uint c = tid; c < nchunks; c += WG_SIZE) {
    float v[32];
    dequant_chunk(base + (c / CHUNKS_PER_BLOCK) * BLOCK_U16, c % CHUNKS_PER_BLOCK, v);
    const uint xb = c * 32u;
    float part = 0.0;
    for (uint k = 0u; k < 32u; ++k) part += v[k] * x[xb + k];
    sum += part;
  }
#endif
  sum = workgroup_sum(sum);
  if (tid == 0u) y[row] = sum;
}
