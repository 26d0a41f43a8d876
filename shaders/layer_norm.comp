#version 450
// One workgroup per row: y = (x - mean(x)) / sqrt(var(x) + eps) * w + b
// (BERT's LayerNorm). The mean is taken first, then the variance around it:
// one pass of sums of squares would cancel away for rows far from zero.
#define NEEDS_REDUCE
#include "hearth/shaders/common.glsl"
#include "hearth/shaders/params.h"

layout(push_constant) uniform Push { RmsNormParams p; };
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer Wt { float w[]; };
layout(std430, binding = 2) readonly buffer Bias { float bias[]; };
layout(std430, binding = 3) writeonly buffer Y { float y[]; };

void main() {
  const uint row = flat_group();
  if (row >= p.nrows) return;  // uniform across the workgroup
  const uint tid = gl_LocalInvocationID.x;
  const uint base = row * p.ncols;
  float s = 0.0;
  for (uint c = tid; c < p.ncols; c += WG_SIZE) s += x[base + c];
  const float mean = workgroup_sum(s) / float(p.ncols);
  float ss = 0.0;
  for (uint c = tid; c < p.ncols; c += WG_SIZE) {
    const float d = x[base + c] - mean;
    ss += d * d;
  }
  const float inv = inversesqrt(workgroup_sum(ss) / float(p.ncols) + p.eps);
  for (uint c = tid; c < p.ncols; c += WG_SIZE) y[base + c] = (x[base + c] - mean) * inv * w[c] + bias[c];
}
