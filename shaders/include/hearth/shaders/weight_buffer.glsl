// Declares the weight buffer at binding 0 in the storage unit of the TYPE_*
// (see weights.glsl), then the accessors.
#ifndef HEARTH_SHADERS_WEIGHT_BUFFER_GLSL
#define HEARTH_SHADERS_WEIGHT_BUFFER_GLSL
#ifdef TYPE_F32
layout(std430, binding = 0) readonly buffer Weights { float wf32[]; };
#else
layout(std430, binding = 0) readonly buffer Weights { uint16_t w16[]; };
#endif
#include "hearth/shaders/weights.glsl"
#endif
