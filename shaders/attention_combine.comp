#version 450
// Merges the partial results of attention split over positions
// (attention.comp with n_splits > 1; formula: AttentionCombineParams in
// params.h). One workgroup per (head, token); every invocation reads the
// splits' (max, sum) pairs, then owns output dims tid, tid + WG_SIZE, ...
#include "hearth/shaders/common.glsl"
#include "hearth/shaders/params.h"

layout(push_constant) uniform Push { AttentionCombineParams p; };
layout(std430, binding = 0) readonly buffer Partials { float partials[]; };
layout(std430, binding = 1) readonly buffer Sinks { float sinks[]; };  // [n_heads] when has_sinks
layout(std430, binding = 2) writeonly buffer O { float outv[]; };

void main() {
  const uint head = gl_WorkGroupID.x, token = gl_WorkGroupID.y;
  const uint stride = p.head_dim + 2u;
  const uint base = (token * p.n_heads + head) * p.n_splits * stride;
  float big = p.has_sinks != 0u ? sinks[head] : -3.402823466e38;
  for (uint s = 0u; s < p.n_splits; ++s) big = max(big, partials[base + s * stride + p.head_dim]);
  float total = p.has_sinks != 0u ? exp(sinks[head] - big) : 0.0;
  for (uint s = 0u; s < p.n_splits; ++s) {
    const uint ms = base + s * stride + p.head_dim;
    total += partials[ms + 1u] * exp(partials[ms] - big);
  }
  const uint qb = (token * p.n_heads + head) * p.head_dim;
  for (uint d = gl_LocalInvocationID.x; d < p.head_dim; d += WG_SIZE) {
    float acc = 0.0;
    for (uint s = 0u; s < p.n_splits; ++s) {
      const uint ps = base + s * stride;
      acc += partials[ps + d] * exp(partials[ps + p.head_dim] - big);
    }
    outv[qb + d] = acc / total;
  }
}
