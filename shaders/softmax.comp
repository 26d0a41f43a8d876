#version 450
// One workgroup per row: y = softmax(x * scale), max-subtracted for range.
#define NEEDS_REDUCE
#include "hearth/shaders/common.glsl"
#include "hearth/shaders/params.h"

layout(push_constant) uniform Push { SoftmaxParams p; };
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) writeonly buffer Y { float y[]; };

void main() {
  const uint row = flat_group();
  if (row >= p.nrows) return;
  const uint tid = gl_LocalInvocationID.x;
  const uint base = row * p.ncols;
  float m = -3.402823466e38;
  for (uint c = tid; c < p.ncols; c += WG_SIZE) m = max(m, x[base + c] * p.scale);
  m = workgroup_max(m);
  float s = 0.0;
  for (uint c = tid; c < p.ncols; c += WG_SIZE) s += exp(x[base + c] * p.scale - m);
  s = workgroup_sum(s);
  const float inv = 1.0 / s;
  for (uint c = tid; c < p.ncols; c += WG_SIZE) y[base + c] = exp(x[base + c] * p.scale - m) * inv;
}
