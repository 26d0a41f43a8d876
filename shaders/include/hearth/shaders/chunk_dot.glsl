// chunk_dot(block_base, chunk, xb): the dot product of one 32-value chunk of
// weights with x[xb .. xb+31], for matvec. The common decode formats fold the
// scales out of the inner loop (sum q*x and sum x, scaled once) instead of
// dequantizing 32 values into an array first; other formats fall back to
// dequant_chunk. The including shader declares `float x[]` (and, for Q4_K,
// the aliases `uvec4 w128[]` and `vec4 x4[]`) first.
#ifndef HEARTH_SHADERS_CHUNK_DOT_GLSL
#define HEARTH_SHADERS_CHUNK_DOT_GLSL

#if defined(TYPE_Q4_K)
// 144-byte blocks are 16-byte aligned, so the block is read as uvec4s: one
// load for d, dmin and all scales, two for the chunk's 32 quant bytes, and
// x as vec4s (w128 and x4 alias bindings 0 and 1).
vec4 nibbles(uint word, uint shift) {
  return vec4((uvec4(word) >> (uvec4(0u, 8u, 16u, 24u) + shift)) & 0xFu);
}
float chunk_dot(uint b, uint chunk, uint xb) {
  const uint bi = b >> 3;  // b is a multiple of 72 words = 9 uvec4s
  const uvec4 head = w128[bi];
  const vec2 dm = unpackHalf2x16(head.x);
  // 6-bit scale/min of sub-block `chunk` (scales bytes 0..11 = head.y, .z, .w).
  const uint j = chunk & 3u, sh = 8u * j;
  uint sc, mn;
  if (chunk < 4u) {
    sc = (head.y >> sh) & 63u;
    mn = (head.z >> sh) & 63u;
  } else {
    sc = ((head.w >> sh) & 0xFu) | (((head.y >> sh) >> 6 & 3u) << 4);
    mn = ((head.w >> sh) >> 4 & 0xFu) | (((head.z >> sh) >> 6 & 3u) << 4);
  }
  const uint qi = bi + 1u + 2u * (chunk >> 1);
  const uint shift = 4u * (chunk & 1u);
  const uvec4 q0 = w128[qi], q1 = w128[qi + 1u];
  const uint xi = xb >> 2;
  const vec4 one = vec4(1.0);
  float sq = dot(nibbles(q0.x, shift), x4[xi]) + dot(nibbles(q0.y, shift), x4[xi + 1u]) +
             dot(nibbles(q0.z, shift), x4[xi + 2u]) + dot(nibbles(q0.w, shift), x4[xi + 3u]) +
             dot(nibbles(q1.x, shift), x4[xi + 4u]) + dot(nibbles(q1.y, shift), x4[xi + 5u]) +
             dot(nibbles(q1.z, shift), x4[xi + 6u]) + dot(nibbles(q1.w, shift), x4[xi + 7u]);
  float sx = 0.0;
  for (uint k = 0u; k < 8u; ++k) sx += dot(x4[xi + k], one);
  return dm.x * float(sc) * sq - dm.y * float(mn) * sx;
}

#elif defined(TYPE_Q6_K)
float chunk_dot(uint b, uint chunk, uint xb) {
  const uint n = chunk >> 2, k = chunk & 3u;
  const uint lbase = b + 32u * n + 16u * (k & 1u);
  const uint hbase = b + 64u + 16u * n;
  const uint lshift = k >= 2u ? 4u : 0u, hshift = 2u * k;
  float total = 0.0;
  for (uint h = 0u; h < 2u; ++h) {
    float sq = 0.0, sx = 0.0;
    for (uint l = 8u * h; l < 8u * h + 8u; ++l) {
      const uint lw = uint(w16[lbase + l]) >> lshift;
      const uint hw = uint(w16[hbase + l]) >> hshift;
      const float x0 = x[xb + 2u * l], x1 = x[xb + 2u * l + 1u];
      sq += float((lw & 0xFu) | ((hw & 3u) << 4)) * x0 + float(((lw >> 8) & 0xFu) | (((hw >> 8) & 3u) << 4)) * x1;
      sx += x0 + x1;
    }
    total += float(sext8(wbyte(b, 192u + 8u * n + h + 2u * k))) * (sq - 32.0 * sx);
  }
  return whalf(b, 208u) * total;
}

#elif defined(TYPE_Q8_0)
float chunk_dot(uint b, uint chunk, uint xb) {
  float s = 0.0;
  for (uint l = 0u; l < 16u; ++l) {
    const uint w = uint(w16[b + 1u + l]);
    s += float(sext8(w & 0xFFu)) * x[xb + 2u * l] + float(sext8(w >> 8)) * x[xb + 2u * l + 1u];
  }
  return whalf(b, 0u) * s;
}

#elif defined(TYPE_Q4_0)
float chunk_dot(uint b, uint chunk, uint xb) {
  float sq = 0.0, sx = 0.0;
  for (uint l = 0u; l < 8u; ++l) {
    const uint w = uint(w16[b + 1u + l]);
    const float x0 = x[xb + 2u * l], x1 = x[xb + 2u * l + 1u];
    const float x2 = x[xb + 2u * l + 16u], x3 = x[xb + 2u * l + 17u];
    sq += float(w & 0xFu) * x0 + float((w >> 8) & 0xFu) * x1 + float((w >> 4) & 0xFu) * x2 + float(w >> 12) * x3;
    sx += x0 + x1 + x2 + x3;
  }
  return whalf(b, 0u) * (sq - 8.0 * sx);
}

#elif !defined(TYPE_PLAIN)
float chunk_dot(uint b, uint chunk, uint xb) {
  float v[32];
  dequant_chunk(b, chunk, v);
  float s = 0.0;
  for (uint k = 0u; k < 32u; ++k) s += v[k] * x[xb + k];
  return s;
}
#endif

#endif  // HEARTH_SHADERS_CHUNK_DOT_GLSL
