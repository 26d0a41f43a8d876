#version 450
// out[i] = act(gate[i]) * up[i], the gated feed-forward activation:
// SiLU (SwiGLU) by default, GELU tanh form (GeGLU) with OP_GELU, gpt-oss's
// clamped SwiGLU with OP_SWIGLU_OAI (see GluParams).
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
#if defined(OP_SWIGLU_OAI)
  const float x = min(g, p.limit);
  const float y = clamp(up[i], -p.limit, p.limit);
  outv[i] = x / (1.0 + exp(-p.alpha * x)) * (y + 1.0);
#elif defined(OP_GELU)
  const float u = 0.7978845608028654 * (g + 0.044715 * g * g * g);
  outv[i] = g * (1.0 - 1.0 / (exp(2.0 * u) + 1.0)) * up[i];
#else
  outv[i] = g / (1.0 + exp(-g)) * up[i];
#endif
}
