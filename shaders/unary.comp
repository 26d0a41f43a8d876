#version 450
// y[i] = f(x[i]) for the activation functions and scaling.
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
#elif defined(OP_GELU)
  // tanh approximation, written with exp so large |v| cannot overflow tanh.
  const float u = 0.7978845608028654 * (v + 0.044715 * v * v * v);
  y[i] = v * (1.0 - 1.0 / (exp(2.0 * u) + 1.0));
#elif defined(OP_SILU)
  y[i] = v / (1.0 + exp(-v));
#elif defined(OP_SOFTCAP)
  y[i] = p.scale * tanh(v / p.scale);
#else
#error "unary.comp: define OP_SCALE, OP_GELU, OP_SILU or OP_SOFTCAP"
#endif
}
