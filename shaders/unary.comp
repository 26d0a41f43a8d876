#version 450
// y[i] = f(x[i]): scaling, soft-capping and GELU (tanh form).
#include "hearth/shaders/common.glsl"
#include "hearth/shaders/params.h"

layout(push_constant) uniform Push { UnaryParams p; };
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) writeonly buffer Y { float y[]; };

void main() {
  const uint i = flat_index();
  if (i >= p.n) return;
  const float v = x[i];
#if defined(OP_SCALE)
  y[i] = v * p.scale;
#elif defined(OP_SOFTCAP)
  y[i] = p.scale * tanh(v / p.scale);
#elif defined(OP_GELU)
  y[i] = 0.5 * v * (1.0 + tanh(0.79788456080286535588 * v * (1.0 + 0.044715 * v * v)));
#else
#error "unary.comp: define OP_SCALE, OP_SOFTCAP or OP_GELU"
#endif
}
