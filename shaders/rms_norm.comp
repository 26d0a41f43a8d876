#version 450
// One workgroup per row: y = x / sqrt(mean(x^2) + eps) * w.
#define NEEDS_REDUCE
#include "hearth/shaders/common.glsl"
#include "hearth/shaders/params.h"

layout(push_constant) uniform Push { RmsNormParams p; };
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer Wt { float w[]; };
layout(std430, binding = 2) writeonly buffer Y { float y[]; };

void main() {
  const uint row = flat_group();
  if (row >= p.nrows) return;  // uniform across the workgroup
  const uint tid = gl_LocalInvocationID.x;
  const uint base = row * p.ncols;
  float ss = 0.0;
  for (uint c = tid; c < p.ncols; c += WG_SIZE) ss += x[base + c] * x[base + c];
  ss = workgroup_sum(ss);
  const float inv = inversesqrt(ss / float(p.ncols) + p.eps);
  for (uint c = tid; c < p.ncols; c += WG_SIZE) y[base + c] = x[base + c] * inv * w[c];
}
