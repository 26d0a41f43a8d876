// Vector math for the aarch64 (NEON) translation units of the CPU backend
// (include nowhere else).
#pragma once

#include <arm_neon.h>

namespace hearth::backend::cpu {

// e^x for x in any range (clamped to the float range): 2^n e^r with
// |r| <= ln2/2 and a degree-6 Taylor polynomial (relative error < 2e-7),
// as exp512 and exp256. The clamp keeps n in [-126, 127], so 2^n is a
// normal float built in the exponent field.
static inline float32x4_t exp_neon(float32x4_t x) {
  x = vmaxq_f32(vminq_f32(x, vdupq_n_f32(88.0f)), vdupq_n_f32(-87.0f));
  const float32x4_t n = vrndnq_f32(vmulq_f32(x, vdupq_n_f32(1.44269504089f)));
  float32x4_t r = vfmsq_f32(x, n, vdupq_n_f32(0.693145751953125f));  // ln2 high part, exact product
  r = vfmsq_f32(r, n, vdupq_n_f32(1.428606765330187e-06f));          // ln2 low part
  float32x4_t p = vdupq_n_f32(1.0f / 720);
  p = vfmaq_f32(vdupq_n_f32(1.0f / 120), p, r);
  p = vfmaq_f32(vdupq_n_f32(1.0f / 24), p, r);
  p = vfmaq_f32(vdupq_n_f32(1.0f / 6), p, r);
  p = vfmaq_f32(vdupq_n_f32(0.5f), p, r);
  p = vfmaq_f32(vdupq_n_f32(1.0f), p, r);
  p = vfmaq_f32(vdupq_n_f32(1.0f), p, r);
  const int32x4_t bits = vshlq_n_s32(vaddq_s32(vcvtq_s32_f32(n), vdupq_n_s32(127)), 23);
  return vmulq_f32(p, vreinterpretq_f32_s32(bits));
}

// cap * tanh(s / cap) = cap * (1 - 2 / (e^(2s/cap) + 1)).
static inline float32x4_t softcap_neon(float32x4_t s, float cap) {
  const float32x4_t e = exp_neon(vmulq_f32(s, vdupq_n_f32(2.0f / cap)));
  const float32x4_t t = vsubq_f32(vdupq_n_f32(1.0f), vdivq_f32(vdupq_n_f32(2.0f), vaddq_f32(e, vdupq_n_f32(1.0f))));
  return vmulq_f32(t, vdupq_n_f32(cap));
}

}  // namespace hearth::backend::cpu
