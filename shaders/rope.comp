#version 450
// Rotary position embedding, in place; one invocation per rotated pair.
// ROPE_NEOX pairs element i with i + n_dims/2; otherwise 2i with 2i+1.
// Linear scaling, YaRN and per-frequency factors as RopeParams describes.
#include "hearth/shaders/common.glsl"
#include "hearth/shaders/params.h"

layout(push_constant) uniform Push { RopeParams p; };
layout(std430, binding = 0) buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer Pos { int positions[]; };
// [n_dims / 2] f32 when has_freq_factors != 0; otherwise any bound buffer.
layout(std430, binding = 2) readonly buffer Ff { float freq_factors[]; };

void main() {
  const uint half_dims = p.n_dims / 2u;
  const uint idx = flat_index();
  if (idx >= p.n_tokens * p.n_heads * half_dims) return;
  const uint i = idx % half_dims;
  const uint head = idx / half_dims;  // token * n_heads + head
  const uint token = head / p.n_heads;
  float theta_extrap = float(positions[token]) * pow(p.freq_base, -2.0 * float(i) / float(p.n_dims));
  if (p.has_freq_factors != 0u) theta_extrap /= freq_factors[i];
  const float theta_interp = p.freq_scale * theta_extrap;
  float theta = theta_interp;
  if (p.ext_factor != 0.0) {
    const float y = (float(i) - p.corr_low) / max(0.001, p.corr_high - p.corr_low);
    const float mix = (1.0 - clamp(y, 0.0, 1.0)) * p.ext_factor;
    theta = theta_interp * (1.0 - mix) + theta_extrap * mix;
  }
  const float c = cos(theta) * p.mscale, s = sin(theta) * p.mscale;
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
