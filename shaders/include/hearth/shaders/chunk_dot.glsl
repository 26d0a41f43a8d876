// chunk_dot(block_base, chunk, xb): the dot product of one 32-value chunk of
// weights with x[xb .. xb+31], for matvec. The common decode formats fold the
// scales out of the inner loop (sum q*x and sum x, scaled once) instead of
// dequantizing 32 values into an array first; other formats fall back to
// dequant_chunk. x is read as vec4s: loads are what CPU implementations such
// as lavapipe pay for per invocation. The including shader declares
// `float x[]` and its alias `vec4 x4[]` (and, for Q4_K, `uvec4 w128[]`) first.
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
  const uint xi = xb >> 2;
  const vec4 one = vec4(1.0);
  float total = 0.0;
  for (uint h = 0u; h < 2u; ++h) {
    float sq = 0.0, sx = 0.0;
    // Four values per step: 16-bit words l and l + 1 of ql and qh.
    for (uint l2 = 4u * h; l2 < 4u * h + 4u; ++l2) {
      const uint lw0 = uint(w16[lbase + 2u * l2]) >> lshift, lw1 = uint(w16[lbase + 2u * l2 + 1u]) >> lshift;
      const uint hw0 = uint(w16[hbase + 2u * l2]) >> hshift, hw1 = uint(w16[hbase + 2u * l2 + 1u]) >> hshift;
      const vec4 q = vec4((lw0 & 0xFu) | ((hw0 & 3u) << 4), ((lw0 >> 8) & 0xFu) | (((hw0 >> 8) & 3u) << 4),
                          (lw1 & 0xFu) | ((hw1 & 3u) << 4), ((lw1 >> 8) & 0xFu) | (((hw1 >> 8) & 3u) << 4));
      const vec4 xv = x4[xi + l2];
      sq += dot(q, xv);
      sx += dot(xv, one);
    }
    total += float(sext8(wbyte(b, 192u + 8u * n + h + 2u * k))) * (sq - 32.0 * sx);
  }
  return whalf(b, 208u) * total;
}

#elif defined(TYPE_Q8_0)
// x is read as vec4s (x4 aliases binding 1): a quarter of the loads.
float chunk_dot(uint b, uint chunk, uint xb) {
  const uint xi = xb >> 2;
  float s = 0.0;
  for (uint i = 0u; i < 8u; ++i) {
    const uint w0 = uint(w16[b + 1u + 2u * i]), w1 = uint(w16[b + 2u + 2u * i]);
    const vec4 q = vec4(sext8(w0 & 0xFFu), sext8(w0 >> 8), sext8(w1 & 0xFFu), sext8(w1 >> 8));
    s += dot(q, x4[xi + i]);
  }
  return whalf(b, 0u) * s;
}

#elif defined(TYPE_Q5_0)
// Values j and j + 16 share byte j of qs (low and high nibble) and take
// bits j and j + 16 of qh as their fifth bit; q - 16 folded out as 16 * sum x.
float chunk_dot(uint b, uint chunk, uint xb) {
  const uint qh = uint(w16[b + 1u]) | (uint(w16[b + 2u]) << 16);
  const uint xi = xb >> 2;
  const vec4 one = vec4(1.0);
  float sq = 0.0, sx = 0.0;
  for (uint i = 0u; i < 4u; ++i) {
    const uint w0 = uint(w16[b + 3u + 2u * i]), w1 = uint(w16[b + 4u + 2u * i]);
    const uvec4 bytes = uvec4(w0 & 0xFFu, w0 >> 8, w1 & 0xFFu, w1 >> 8);
    const uvec4 j = uvec4(4u * i) + uvec4(0u, 1u, 2u, 3u);
    const vec4 lo = vec4((bytes & 0xFu) | (((uvec4(qh) >> j) & 1u) << 4));
    const vec4 hi = vec4((bytes >> 4) | ((uvec4(qh) >> (j + 12u)) & 0x10u));
    const vec4 xl = x4[xi + i], xh = x4[xi + 4u + i];
    sq += dot(lo, xl) + dot(hi, xh);
    sx += dot(xl + xh, one);
  }
  return whalf(b, 0u) * (sq - 16.0 * sx);
}

#elif defined(TYPE_Q4_0)
float chunk_dot(uint b, uint chunk, uint xb) {
  const uint xi = xb >> 2;
  const vec4 one = vec4(1.0);
  float sq = 0.0, sx = 0.0;
  for (uint i = 0u; i < 4u; ++i) {
    const uint w0 = uint(w16[b + 1u + 2u * i]), w1 = uint(w16[b + 2u + 2u * i]);
    const uvec4 bytes = uvec4(w0 & 0xFFu, w0 >> 8, w1 & 0xFFu, w1 >> 8);
    const vec4 xl = x4[xi + i], xh = x4[xi + 4u + i];
    sq += dot(vec4(bytes & 0xFu), xl) + dot(vec4(bytes >> 4), xh);
    sx += dot(xl + xh, one);
  }
  return whalf(b, 0u) * (sq - 8.0 * sx);
}

#elif !defined(TYPE_PLAIN)
float chunk_dot(uint b, uint chunk, uint xb) {
  float v[32];
  dequant_chunk(b, chunk, v);
  const uint xi = xb >> 2;
  float s = 0.0;
  for (uint k = 0u; k < 8u; ++k) s += dot(vec4(v[4u * k], v[4u * k + 1u], v[4u * k + 2u], v[4u * k + 3u]), x4[xi + k]);
  return s;
}
#endif

#endif  // HEARTH_SHADERS_CHUNK_DOT_GLSL
