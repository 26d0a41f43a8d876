#version 450
// d[i] = a[i] + b[i % b_len]: residual adds and bias adds.
#include "hearth/shaders/common.glsl"
#include "hearth/shaders/params.h"

layout(push_constant) uniform Push { BinaryParams p; };
layout(std430, binding = 0) readonly buffer A { float a[]; };
layout(std430, binding = 1) readonly buffer B { float b[]; };
layout(std430, binding = 2) writeonly buffer D { float d[]; };

void main() {
  const uint i = flat_index();
  if (i >= p.n) return;
  const float bv = b[i % p.b_len];
#if defined(OP_ADD)
  d[i] = a[i] + bv;
#else
#error "binary.comp: define OP_ADD"
#endif
}
