// chunk_dot(block_base, chunk, xb, xs, sums): for each of the MV_COLS
// activation columns j, adds the dot product of one 32-value chunk of
// weights with x[xb + j * xs .. + 31] to sums[j], for matvec. The weights are
// decoded once (integer work and exact conversions only) and then every
// column runs the same float expression, so column j's sum is bit for bit
// what a one-column pass computes for that column: speculative decoding's
// verify pass depends on it. The common decode formats fold the scales out of
// the inner loop (sum q*x and sum x, scaled once) instead of dequantizing 32
// values into an array first; other formats fall back to dequant_chunk. x is
// read as vec4s: loads are what CPU implementations such as lavapipe pay for
// per invocation. The including shader declares MV_COLS, MAX_COLS, `float
// x[]` and its alias `vec4 x4[]` (and, for Q4_K, `uvec4 w128[]`) first.
#ifndef HEARTH_SHADERS_CHUNK_DOT_GLSL
#define HEARTH_SHADERS_CHUNK_DOT_GLSL
// The decode loops fill small arrays: unrolled, they stay in registers
// (a loop left rolled makes them indexed memory on some compilers).
#extension GL_EXT_control_flow_attributes : require

#if defined(TYPE_Q5_0) || defined(TYPE_Q4_0)
// The columns of a block whose codes carry an offset (Q5_0: 16, Q4_0: 8):
// d * (sum q x - offset * sum x) per column, values 0..15 in lo, 16..31 in
// hi. One expression for every column count keeps columns bit-identical.
void offset_columns(vec4 lo[4], vec4 hi[4], float d, float offset, uint xb, uint xs, inout float sums[MAX_COLS]) {
  const vec4 one = vec4(1.0);
  for (uint col = 0u; col < MV_COLS; ++col) {
    const uint xi = (xb + col * xs) >> 2;
    float sq = 0.0, sx = 0.0;
    for (uint i = 0u; i < 4u; ++i) {
      const vec4 xl = x4[xi + i], xh = x4[xi + 4u + i];
      sq += dot(lo[i], xl) + dot(hi[i], xh);
      sx += dot(xl + xh, one);
    }
    sums[col] += d * (sq - offset * sx);
  }
}
#endif

#if defined(TYPE_Q4_K)
// 144-byte blocks are 16-byte aligned, so the block is read as uvec4s: one
// load for d, dmin and all scales, two for the chunk's 32 quant bytes, and
// x as vec4s (w128 and x4 alias bindings 0 and 1).
vec4 nibbles(uint word, uint shift) {
  return vec4((uvec4(word) >> (uvec4(0u, 8u, 16u, 24u) + shift)) & 0xFu);
}
void chunk_dot(uint b, uint chunk, uint xb, uint xs, inout float sums[MAX_COLS]) {
  const uint bi = b >> 3;  // b is a multiple of 72 words = 9 uvec4s
  const uvec4 head = w128[bi];
  const vec2 dm = unpackHalf2x16(head.x);
  // 6-bit scale/min of sub-block `chunk` (scales bytes 0..11 = head.y, .z, .w).
  uint sc, mn;
  scale_min_k4_head(head, chunk, sc, mn);
  const uint qi = bi + 1u + 2u * (chunk >> 1);
  const uint shift = 4u * (chunk & 1u);
  const uvec4 q0 = w128[qi], q1 = w128[qi + 1u];
  const vec4 n[8] = vec4[8](nibbles(q0.x, shift), nibbles(q0.y, shift), nibbles(q0.z, shift), nibbles(q0.w, shift),
                            nibbles(q1.x, shift), nibbles(q1.y, shift), nibbles(q1.z, shift), nibbles(q1.w, shift));
  const vec4 one = vec4(1.0);
  for (uint col = 0u; col < MV_COLS; ++col) {
    const uint xi = (xb + col * xs) >> 2;
    float sq = dot(n[0], x4[xi]) + dot(n[1], x4[xi + 1u]) + dot(n[2], x4[xi + 2u]) + dot(n[3], x4[xi + 3u]) +
               dot(n[4], x4[xi + 4u]) + dot(n[5], x4[xi + 5u]) + dot(n[6], x4[xi + 6u]) + dot(n[7], x4[xi + 7u]);
    float sx = 0.0;
    for (uint k = 0u; k < 8u; ++k) sx += dot(x4[xi + k], one);
    sums[col] += dm.x * float(sc) * sq - dm.y * float(mn) * sx;
  }
}

#elif defined(TYPE_Q6_K)
// Decoded inside the column loop, four values at a time as it streams:
// holding all 32 decoded values across columns costs more registers than
// the (cached) re-reads cost, and the decode is exact integer work, so each
// column still computes the same expression.
void chunk_dot(uint b, uint chunk, uint xb, uint xs, inout float sums[MAX_COLS]) {
  const uint n = chunk >> 2, k = chunk & 3u;
  const uint lbase = b + 32u * n + 16u * (k & 1u);
  const uint hbase = b + 64u + 16u * n;
  const uint lshift = k >= 2u ? 4u : 0u, hshift = 2u * k;
  const vec4 one = vec4(1.0);
  for (uint col = 0u; col < MV_COLS; ++col) {
    const uint xi = (xb + col * xs) >> 2;
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
    sums[col] += whalf(b, 208u) * total;
  }
}

#elif defined(TYPE_Q8_0)
// x is read as vec4s (x4 aliases binding 1): a quarter of the loads.
void chunk_dot(uint b, uint chunk, uint xb, uint xs, inout float sums[MAX_COLS]) {
  vec4 q[8];
  [[unroll]] for (uint i = 0u; i < 8u; ++i) {
    const uint w0 = uint(w16[b + 1u + 2u * i]), w1 = uint(w16[b + 2u + 2u * i]);
    q[i] = vec4(sext8(w0 & 0xFFu), sext8(w0 >> 8), sext8(w1 & 0xFFu), sext8(w1 >> 8));
  }
  const float d = whalf(b, 0u);
  for (uint col = 0u; col < MV_COLS; ++col) {
    const uint xi = (xb + col * xs) >> 2;
    float s = 0.0;
    for (uint i = 0u; i < 8u; ++i) s += dot(q[i], x4[xi + i]);
    sums[col] += d * s;
  }
}

#elif defined(TYPE_Q5_0)
// Values j and j + 16 share byte j of qs (low and high nibble) and take
// bits j and j + 16 of qh as their fifth bit; q - 16 folded out as 16 * sum x.
void chunk_dot(uint b, uint chunk, uint xb, uint xs, inout float sums[MAX_COLS]) {
  const uint qh = uint(w16[b + 1u]) | (uint(w16[b + 2u]) << 16);
  vec4 lo[4], hi[4];
  [[unroll]] for (uint i = 0u; i < 4u; ++i) {
    const uint w0 = uint(w16[b + 3u + 2u * i]), w1 = uint(w16[b + 4u + 2u * i]);
    const uvec4 bytes = uvec4(w0 & 0xFFu, w0 >> 8, w1 & 0xFFu, w1 >> 8);
    const uvec4 j = uvec4(4u * i) + uvec4(0u, 1u, 2u, 3u);
    lo[i] = vec4((bytes & 0xFu) | (((uvec4(qh) >> j) & 1u) << 4));
    hi[i] = vec4((bytes >> 4) | ((uvec4(qh) >> (j + 12u)) & 0x10u));
  }
  offset_columns(lo, hi, whalf(b, 0u), 16.0, xb, xs, sums);
}

#elif defined(TYPE_Q4_0)
void chunk_dot(uint b, uint chunk, uint xb, uint xs, inout float sums[MAX_COLS]) {
  vec4 lo[4], hi[4];
  [[unroll]] for (uint i = 0u; i < 4u; ++i) {
    const uint w0 = uint(w16[b + 1u + 2u * i]), w1 = uint(w16[b + 2u + 2u * i]);
    const uvec4 bytes = uvec4(w0 & 0xFFu, w0 >> 8, w1 & 0xFFu, w1 >> 8);
    lo[i] = vec4(bytes & 0xFu);
    hi[i] = vec4(bytes >> 4);
  }
  offset_columns(lo, hi, whalf(b, 0u), 8.0, xb, xs, sums);
}

#elif !defined(TYPE_PLAIN)
void chunk_dot(uint b, uint chunk, uint xb, uint xs, inout float sums[MAX_COLS]) {
  float v[32];
  dequant_chunk(b, chunk, v);
  for (uint col = 0u; col < MV_COLS; ++col) {
    const uint xi = (xb + col * xs) >> 2;
    float s = 0.0;
    for (uint k = 0u; k < 8u; ++k) {
      s += dot(vec4(v[4u * k], v[4u * k + 1u], v[4u * k + 2u], v[4u * k + 3u]), x4[xi + k]);
    }
    sums[col] += s;
  }
}
#endif

#endif  // HEARTH_SHADERS_CHUNK_DOT_GLSL
