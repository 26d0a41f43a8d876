#version 450
// out[i] = silu(gate[i]) * up[i], the gated feed-forward activation.
#include "hearth/shaders/common.glsl"
#include "hearth/shaders/params.h"

layout(push_constant) uniform Push { GluParams p; };
layout(std430, binding = 0) readonly buffer G { float gate[]; };
layout(std430, binding = 1) readonly buffer U { float up[]; };
layout(std430, binding = 2) writeonly buffer O { float outv[]; };

void main() {
  const uint i = flat_index();
  if (i >= p.n) return;
  const float g = gate[i];
  outv[i] = g / (1.0 + exp(-g)) * up[i];
}
