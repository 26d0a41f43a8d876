#version 450
// Embedding lookup: out[i] = dequantized row ids[i] of the table.
// One workgroup per id.
#include "hearth/shaders/common.glsl"
#include "hearth/shaders/params.h"
#include "hearth/shaders/weight_buffer.glsl"

layout(push_constant) uniform Push { GetRowsParams p; };
layout(std430, binding = 1) readonly buffer Ids { int ids[]; };
layout(std430, binding = 2) writeonly buffer O { float outv[]; };

void main() {
  const uint i = flat_group();
  if (i >= p.n_ids) return;
  const uint tid = gl_LocalInvocationID.x;
  const uint id = uint(ids[i]);
  if (id < p.row_begin || id - p.row_begin >= p.row_count) return;  // another piece's row
  const uint base = (id - p.row_begin) * p.row_stride;
  const uint ob = i * p.ncols;
#ifdef TYPE_PLAIN
  for (uint c = tid; c < p.ncols; c += WG_SIZE) outv[ob + c] = load_elem(base + c);
#else
  for (uint c = tid; c < p.ncols / 32u; c += WG_SIZE) {
    float v[32];
    dequant_chunk(base + (c / CHUNKS_PER_BLOCK) * BLOCK_U16, c % CHUNKS_PER_BLOCK, v);
    for (uint k = 0u; k < 32u; ++k) outv[ob + c * 32u + k] = v[k];
  }
#endif
}
