#version 450
// Rotary position embedding, in place; one invocation per rotated pair.
// ROPE_NEOX pairs element i with i + n_dims/2; otherwise 2i with 2i+1.
#include "hearth/shaders/common.glsl"
#include "hearth/shaders/params.h"

layout(push_constant) uniform Push { RopeParams p; };
layout(std430, binding = 0) buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer Pos { int positions[]; };

void main() {
  const uint half_dims = p.n_dims / 2u;
  const uint idx = flat_index();
  if (idx >= p.n_tokens * p.n_heads * half_dims) return;
  const uint i = idx % half_dims;
  const uint head = idx / half_dims;  // token * n_heads + head
  const uint token = head / p.n_heads;
  const float theta = float(positions[token]) * p.freq_scale *
                      pow(p.freq_base, -2.0 * float(i) / float(p.n_dims));
  const float c = cos(theta), s = sin(theta);
  const uint base = head * p.head_dim;
#ifdef ROPE_NEOX
  const uint i0 = base + i, i1 = base + i + half_dims;
#else
  const uint i0 = base + 2u * i, i1 = base + 2u * i + 1u;
#endif
  const float x0 = x[i0], x1 = x[i1];
  x[i0] = x0 * c - x1 * s;
  x[i1] = x0 * s + x1 * c;
}
