#version 450
// Mixture-of-experts routing (one invocation per token), the weighted sum
// of the chosen experts' outputs and the experts' biases (one invocation per
// output value); see MoeRouteParams. Expert counts are small (8 to 256), so the top-k is k
// passes of a linear scan.
#include "hearth/shaders/common.glsl"
#include "hearth/shaders/params.h"

layout(push_constant) uniform Push { MoeRouteParams p; };
layout(std430, binding = 0) readonly buffer A { float a[]; };  // logits, or the experts' outputs (sum)
#if defined(MOE_TOP_K)
layout(std430, binding = 1) writeonly buffer Ids { int ids_out[]; };
#elif defined(MOE_GATE)
layout(std430, binding = 1) readonly buffer Ids { int ids[]; };
layout(std430, binding = 2) writeonly buffer W { float w_out[]; };
#elif defined(MOE_ADD_ID)
layout(std430, binding = 1) readonly buffer Ids { int ids[]; };
layout(std430, binding = 2) readonly buffer Bias { float bias[]; };
layout(std430, binding = 3) writeonly buffer Out { float outv[]; };
#else
layout(std430, binding = 1) readonly buffer W { float w[]; };
layout(std430, binding = 2) writeonly buffer Out { float outv[]; };
#endif

void main() {
  const uint i = flat_index();
#if defined(MOE_TOP_K)
  if (i >= p.n_tokens) return;
  const uint base = i * p.n_expert;
  float last = 0.0;
  int last_id = -1;
  for (uint s = 0u; s < p.k; ++s) {
    // The largest value ranked after (last, last_id): smaller, or equal
    // with a higher index.
    int best = -1;
    float bv = 0.0;
    for (uint e = 0u; e < p.n_expert; ++e) {
      const float v = a[base + e];
      const bool after = last_id < 0 || v < last || (v == last && int(e) > last_id);
      if (after && (best < 0 || v > bv)) {
        best = int(e);
        bv = v;
      }
    }
    ids_out[i * p.k + s] = best;
    last = bv;
    last_id = best;
  }
#elif defined(MOE_GATE)
  if (i >= p.n_tokens) return;
  const uint base = i * p.n_expert;
  float mx = -1.0 / 0.0;
  if (p.gating == 0u) {
    for (uint e = 0u; e < p.n_expert; ++e) mx = max(mx, a[base + e]);
  } else {
    for (uint s = 0u; s < p.k; ++s) mx = max(mx, a[base + uint(ids[i * p.k + s])]);
  }
  float total = 0.0;
  if (p.gating == 0u) {
    for (uint e = 0u; e < p.n_expert; ++e) total += exp(a[base + e] - mx);
  } else {
    for (uint s = 0u; s < p.k; ++s) total += exp(a[base + uint(ids[i * p.k + s])] - mx);
  }
  float chosen = 0.0;
  for (uint s = 0u; s < p.k; ++s) chosen += exp(a[base + uint(ids[i * p.k + s])] - mx) / total;
  const float div = p.normalize != 0u ? max(chosen, 6.103515625e-5) : 1.0;
  for (uint s = 0u; s < p.k; ++s) {
    w_out[i * p.k + s] = exp(a[base + uint(ids[i * p.k + s])] - mx) / total / div * p.scale;
  }
#elif defined(MOE_ADD_ID)
  if (i >= p.n_tokens * p.k * p.width) return;
  const uint slot = i / p.width, c = i % p.width;
  outv[i] = a[i] + bias[uint(ids[slot]) * p.width + c];
#else
  if (i >= p.n_tokens * p.width) return;
  const uint t = i / p.width, c = i % p.width;
  float sum = 0.0;
  for (uint s = 0u; s < p.k; ++s) sum += a[(t * p.k + s) * p.width + c] * w[t * p.k + s];
  outv[i] = sum;
#endif
}
