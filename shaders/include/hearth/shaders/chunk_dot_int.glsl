// chunk_dot_int(block_base, chunk, c, token0, sums): the integer-dot twin of
// chunk_dot (chunk_dot.glsl) for the matvec's INT_DOT variants. The
// activations arrive as 8-bit blocks (quantize_q8.comp); column j reads
// token token0 + j of them (products by expert id: its slot's row), whose block c
// (the row's c-th 32-value chunk) has code words codes4[2c], [2c + 1] and the
// pair scales[c] = (d, d * sum of codes) of its token. The weights' codes are packed
// four signed bytes to a word, so each 32-value product is eight packed dot
// products (OpSDot); the block scales are applied once per chunk in float.
// Integer sums are exact and each column runs the same float expression, so
// column j is bit for bit a one-column pass (speculative verify relies on it).
// The weights' codes and scales come from chunk_codes (chunk_codes_int.glsl),
// which the prompt tiles share.
// The including shader declares MV_COLS, MAX_COLS, `uint16_t w16[]`,
// `uvec4 codes4[]` and `vec2 scales[]` (binding 1) and, for Q4_K/Q5_K,
// `uvec4 w128[]` (binding 0).
#ifndef HEARTH_SHADERS_CHUNK_DOT_INT_GLSL
#define HEARTH_SHADERS_CHUNK_DOT_INT_GLSL
#include "hearth/shaders/chunk_codes_int.glsl"

// Token tok's code words of chunk c, and where its (d, sum) pair is.
uint codes_index(uint tok, uint c) { return tok * (token_words(p.ncols / 32u) / 4u) + 2u * c; }
uint scales_index(uint tok, uint c) {
  const uint nb = p.ncols / 32u;
  return (tok * token_words(nb) + 8u * padded_blocks(nb)) / 2u + c;
}

// sum of w[i] . x[i] over the eight words of a chunk, as packed dot products.
int dot8(uint w[8], uvec4 x0, uvec4 x1) {
  return SDOT(w[0], x0.x) + SDOT(w[1], x0.y) + SDOT(w[2], x0.z) + SDOT(w[3], x0.w) + SDOT(w[4], x1.x) +
         SDOT(w[5], x1.y) + SDOT(w[6], x1.z) + SDOT(w[7], x1.w);
}

#if defined(TYPE_Q2_K) || defined(TYPE_Q3_K) || defined(TYPE_Q6_K)
// Two 16-value halves with their own scales (chunk_codes' sc). Q2_K's min
// takes each half's activation code sum (packed dot products with ones).
void chunk_dot_int(uint b, uint chunk, uint c, uint token0, inout float sums[MAX_COLS]) {
  uint w[8];
  vec4 sc;
  chunk_codes(b, chunk, w, sc);
  for (uint col = 0u; col < MV_COLS; ++col) {
    const uint ci = codes_index(token0 + col, c);
    const uvec4 x0 = codes4[ci], x1 = codes4[ci + 1u];
    const int lo = SDOT(w[0], x0.x) + SDOT(w[1], x0.y) + SDOT(w[2], x0.z) + SDOT(w[3], x0.w);
    const int hi = SDOT(w[4], x1.x) + SDOT(w[5], x1.y) + SDOT(w[6], x1.z) + SDOT(w[7], x1.w);
#ifdef TYPE_Q6_K
    sums[col] += sc.z * scales[scales_index(token0 + col, c)].x * (sc.x * float(lo) + sc.y * float(hi));
#else
    float sum = sc.x * float(lo) + sc.y * float(hi);
#ifdef TYPE_Q2_K
    const uint ones = 0x01010101u;
    const int xlo = SDOT(ones, x0.x) + SDOT(ones, x0.y) + SDOT(ones, x0.z) + SDOT(ones, x0.w);
    const int xhi = SDOT(ones, x1.x) + SDOT(ones, x1.y) + SDOT(ones, x1.z) + SDOT(ones, x1.w);
    sum -= sc.z * float(xlo) + sc.w * float(xhi);
#endif
    sums[col] += scales[scales_index(token0 + col, c)].x * sum;
#endif
  }
}
#else
// One scale and min per chunk (sc = (d, m)): d_w * d_x * (codes . x codes)
// + m * d_x * (sum of x codes) for every column (m = 0 for symmetric codes).
void chunk_dot_int(uint b, uint chunk, uint c, uint token0, inout float sums[MAX_COLS]) {
  uint w[8];
  vec4 sc;
  chunk_codes(b, chunk, w, sc);
  for (uint col = 0u; col < MV_COLS; ++col) {
    const uint ci = codes_index(token0 + col, c);
    const vec2 ds = scales[scales_index(token0 + col, c)];
    sums[col] += sc.x * ds.x * float(dot8(w, codes4[ci], codes4[ci + 1u])) + sc.y * ds.y;
  }
}
#endif

#endif  // HEARTH_SHADERS_CHUNK_DOT_INT_GLSL
