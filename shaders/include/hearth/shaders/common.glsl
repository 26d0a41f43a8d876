// Shared by every compute shader: the workgroup size is specialization
// constant 0 (chosen per device by the host), and large 1-D problems are
// dispatched as a 2-D grid because maxComputeWorkGroupCount[0] may be 65535.
#ifndef HEARTH_SHADERS_COMMON_GLSL
#define HEARTH_SHADERS_COMMON_GLSL

// 16-bit storage (f16 weights, KV cache, block formats) is a device requirement.
#extension GL_EXT_shader_16bit_storage : require

layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG_SIZE = 64;

uint flat_index() {
  return gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * WG_SIZE;
}
uint flat_group() { return gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x; }

#ifdef NEEDS_REDUCE
// Shared-memory tree reductions over the workgroup (WG_SIZE is a power of
// two, checked by the host). Every invocation must call them.
shared float red_buf[WG_SIZE];
float workgroup_sum(float v) {
  const uint tid = gl_LocalInvocationID.x;
  red_buf[tid] = v;
  barrier();
  for (uint s = WG_SIZE / 2u; s > 0u; s >>= 1) {
    if (tid < s) red_buf[tid] += red_buf[tid + s];
    barrier();
  }
  const float r = red_buf[0];
  barrier();
  return r;
}
float workgroup_max(float v) {
  const uint tid = gl_LocalInvocationID.x;
  red_buf[tid] = v;
  barrier();
  for (uint s = WG_SIZE / 2u; s > 0u; s >>= 1) {
    if (tid < s) red_buf[tid] = max(red_buf[tid], red_buf[tid + s]);
    barrier();
  }
  const float r = red_buf[0];
  barrier();
  return r;
}
#endif

#endif  // HEARTH_SHADERS_COMMON_GLSL
