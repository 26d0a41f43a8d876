#version 450
// Activations to 8-bit blocks for the integer-dot matvec (chunk_dot_int.glsl):
// x: [n_tokens][ncols] f32, ncols a multiple of 32. Each token's row becomes
// nb = ncols / 32 blocks: the codes q = roundEven(x / d), d = max|x| / 127,
// packed four per word (8 words a block), then each block's (d, d * sum of
// the codes) as two floats: the sum of the 8-bit values, so a format's min
// term and its codes see the same activations (W times one vector). Layout per token (token_words(), params.h: QuantizeParams): the
// code words of every block, padded to an even block count so both regions
// start on 16 bytes, then the (d, sum) pairs. One invocation per block.
#include "hearth/shaders/common.glsl"
#include "hearth/shaders/params.h"

layout(push_constant) uniform Push { QuantizeParams p; };
layout(std430, binding = 0) readonly buffer X { vec4 x4[]; };
layout(std430, binding = 1) writeonly buffer Codes { uvec4 codes[]; };
layout(std430, binding = 1) writeonly buffer Scales { vec2 scales[]; };

void main() {
  const uint nb = p.ncols / 32u;
  const uint g = flat_index();
  if (g >= nb * p.n_tokens) return;
  const uint token = g / nb, blk = g % nb;
  const uint xi = (token * p.ncols + 32u * blk) / 4u;
  vec4 v[8];
  float amax = 0.0;
  for (uint i = 0u; i < 8u; ++i) {
    v[i] = x4[xi + i];
    const vec4 a = abs(v[i]);
    amax = max(amax, max(max(a.x, a.y), max(a.z, a.w)));
  }
  const float d = amax / 127.0;
  const float inv = amax > 0.0 ? 127.0 / amax : 0.0;
  uint words[8];
  int sum = 0;
  for (uint i = 0u; i < 8u; ++i) {
    const ivec4 q = clamp(ivec4(roundEven(v[i] * inv)), ivec4(-127), ivec4(127));
    sum += (q.x + q.y) + (q.z + q.w);
    words[i] = (uint(q.x) & 0xFFu) | ((uint(q.y) & 0xFFu) << 8) | ((uint(q.z) & 0xFFu) << 16) | (uint(q.w) << 24);
  }
  const uint base = token * token_words(nb);  // in 32-bit words
  codes[(base + 8u * blk) / 4u] = uvec4(words[0], words[1], words[2], words[3]);
  codes[(base + 8u * blk) / 4u + 1u] = uvec4(words[4], words[5], words[6], words[7]);
  scales[(base + 8u * padded_blocks(nb)) / 2u + blk] = vec2(d, d * float(sum));
}
