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
// Codes that carry an offset (Q4_0: q - 8) are shifted into signed bytes
// first; formats with a min (Q4_1, Q4_K, ...) take it times the block's sum.
// The including shader declares MV_COLS, MAX_COLS, `uint16_t w16[]`,
// `uvec4 codes4[]` and `vec2 scales[]` (binding 1) and, for Q4_K/Q5_K,
// `uvec4 w128[]` (binding 0).
#ifndef HEARTH_SHADERS_CHUNK_DOT_INT_GLSL
#define HEARTH_SHADERS_CHUNK_DOT_INT_GLSL
#extension GL_EXT_control_flow_attributes : require
#extension GL_EXT_spirv_intrinsics : require

// OpSDot (SPV_KHR_integer_dot_product, core in SPIR-V 1.6) on two words of
// four signed bytes; format 0 = PackedVectorFormat4x8Bit. Declared through
// spirv_intrinsics because the packaged GLSL compiler predates the GLSL
// extension that names it. Capabilities: DotProduct (6019),
// DotProductInput4x8BitPacked (6018).
spirv_instruction(extensions = ["SPV_KHR_integer_dot_product"], capabilities = [6019, 6018], id = 4450)
int sdot_packed(uint a, uint b, spirv_literal int format);
#define SDOT(a, b) sdot_packed((a), (b), 0)

// Two consecutive 16-bit weight words as one 32-bit word (little-endian).
uint w32(uint i) { return uint(w16[i]) | (uint(w16[i + 1u]) << 16); }

// Each byte of `w` (0..127) minus `offset` (< 128), as signed bytes.
uint minus_bytes(uint w, uint offset) { return ((w | 0x80808080u) - offset * 0x01010101u) ^ 0x80808080u; }

// Bits 0..3 of x moved to bit 0 of bytes 0..3 (the four shifted copies never overlap).
uint spread4(uint x) { return ((x & 0xFu) * 0x00204081u) & 0x01010101u; }

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

// d_w * d_x * (codes . x codes) + m * d_x * (sum of x codes) for every column: the
// common tail of the 32-value block formats (m = 0 for symmetric codes).
void block_columns(uint w[8], float d, float m, uint c, uint token0, inout float sums[MAX_COLS]) {
  for (uint col = 0u; col < MV_COLS; ++col) {
    const uint ci = codes_index(token0 + col, c);
    const vec2 ds = scales[scales_index(token0 + col, c)];
    sums[col] += d * ds.x * float(dot8(w, codes4[ci], codes4[ci + 1u])) + m * ds.y;
  }
}

#if defined(TYPE_Q8_0)
void chunk_dot_int(uint b, uint chunk, uint c, uint token0, inout float sums[MAX_COLS]) {
  uint w[8];
  [[unroll]] for (uint i = 0u; i < 8u; ++i) w[i] = w32(b + 1u + 2u * i);
  block_columns(w, whalf(b, 0u), 0.0, c, token0, sums);
}

#elif defined(TYPE_Q4_0) || defined(TYPE_Q4_1)
// Byte j of qs holds values j (low nibble) and j + 16 (high nibble).
void chunk_dot_int(uint b, uint chunk, uint c, uint token0, inout float sums[MAX_COLS]) {
#ifdef TYPE_Q4_0
  const uint qs = b + 1u, offset = 8u;
  const float m = 0.0;
#else
  const uint qs = b + 2u, offset = 0u;
  const float m = whalf(b, 2u);
#endif
  uint w[8];
  [[unroll]] for (uint i = 0u; i < 4u; ++i) {
    const uint q = w32(qs + 2u * i);
    w[i] = minus_bytes(q & 0x0F0F0F0Fu, offset);
    w[i + 4u] = minus_bytes((q >> 4) & 0x0F0F0F0Fu, offset);
  }
  block_columns(w, whalf(b, 0u), m, c, token0, sums);
}

#elif defined(TYPE_Q5_0) || defined(TYPE_Q5_1)
// As Q4_0/Q4_1, with bit j of qh the fifth bit of value j.
void chunk_dot_int(uint b, uint chunk, uint c, uint token0, inout float sums[MAX_COLS]) {
#ifdef TYPE_Q5_0
  const uint qh_at = b + 1u, offset = 16u;
  const float m = 0.0;
#else
  const uint qh_at = b + 2u, offset = 0u;
  const float m = whalf(b, 2u);
#endif
  const uint qh = w32(qh_at);
  uint w[8];
  [[unroll]] for (uint i = 0u; i < 4u; ++i) {
    const uint q = w32(qh_at + 2u + 2u * i);
    w[i] = minus_bytes((q & 0x0F0F0F0Fu) | (spread4(qh >> (4u * i)) << 4), offset);
    w[i + 4u] = minus_bytes(((q >> 4) & 0x0F0F0F0Fu) | (spread4(qh >> (16u + 4u * i)) << 4), offset);
  }
  block_columns(w, whalf(b, 0u), m, c, token0, sums);
}

#elif defined(TYPE_Q4_K) || defined(TYPE_Q5_K)
// 144- and 176-byte blocks are 16-byte aligned: read as uvec4s (w128). The
// first holds d, dmin and the twelve bytes of 6-bit scales and mins.
void chunk_dot_int(uint b, uint chunk, uint c, uint token0, inout float sums[MAX_COLS]) {
  const uint bi = b >> 3;
  const uvec4 head = w128[bi];
  const vec2 dm = unpackHalf2x16(head.x);
  uint sc, mn;
  scale_min_k4_head(head, chunk, sc, mn);
#ifdef TYPE_Q4_K
  const uint qi = bi + 1u + 2u * (chunk >> 1);
#else
  const uint qi = bi + 3u + 2u * (chunk >> 1);  // after 32 bytes of qh
  const uvec4 h0 = w128[bi + 1u], h1 = w128[bi + 2u];
  const uint hb[8] = uint[8](h0.x, h0.y, h0.z, h0.w, h1.x, h1.y, h1.z, h1.w);
#endif
  const uint shift = 4u * (chunk & 1u);
  const uvec4 q0 = w128[qi], q1 = w128[qi + 1u];
  uint w[8] = uint[8](q0.x, q0.y, q0.z, q0.w, q1.x, q1.y, q1.z, q1.w);
  [[unroll]] for (uint i = 0u; i < 8u; ++i) {
    w[i] = (w[i] >> shift) & 0x0F0F0F0Fu;
#ifdef TYPE_Q5_K
    w[i] |= ((hb[i] >> chunk) & 0x01010101u) << 4;
#endif
  }
  block_columns(w, dm.x * float(sc), -dm.y * float(mn), c, token0, sums);
}

#elif defined(TYPE_IQ4_NL) || defined(TYPE_IQ4_XS) || defined(TYPE_MXFP4)
// Nibbles index a table of small integers (IQ4's non-linear grid, MXFP4's
// E2M1 values doubled, as the plain path's kMxfp4), held as 16 signed bytes
// in one uvec4: picking a component and a byte needs no array in private
// memory (which a dynamically indexed constant array becomes).
#ifdef TYPE_MXFP4
const uvec4 kCodeBytes = uvec4(0x03020100u, 0x0C080604u, 0xFDFEFF00u, 0xF4F8FAFCu);  // 0 1 2 3 4 6 8 12, then negated
#else
const uvec4 kCodeBytes = uvec4(0xBFAD9881u, 0xF6EADDCFu, 0x26190D01u, 0x71594535u);  // -127 -104 ... 89 113
#endif
uint code_byte(uint n) { return (kCodeBytes[n >> 2] >> (8u * (n & 3u))) & 0xFFu; }
// The four nibbles in bits 0..3 of each byte of `n`, as four signed table bytes.
uint lookup4(uint n) {
  return code_byte(n & 0xFu) | (code_byte((n >> 8) & 0xFu) << 8) | (code_byte((n >> 16) & 0xFu) << 16) |
         (code_byte((n >> 24) & 0xFu) << 24);
}
// Byte j of a chunk's 16 code bytes holds values j (low nibble) and j + 16
// (high nibble); qword(i) is code bytes 4i..4i+3.
void nibble_words(uint qword[4], out uint w[8]) {
  [[unroll]] for (uint i = 0u; i < 4u; ++i) {
    w[i] = lookup4(qword[i] & 0x0F0F0F0Fu);
    w[i + 4u] = lookup4((qword[i] >> 4) & 0x0F0F0F0Fu);
  }
}
void chunk_dot_int(uint b, uint chunk, uint c, uint token0, inout float sums[MAX_COLS]) {
  uint qword[4];
#if defined(TYPE_IQ4_NL)
  [[unroll]] for (uint i = 0u; i < 4u; ++i) qword[i] = w32(b + 1u + 2u * i);
  const float d = whalf(b, 0u);
#elif defined(TYPE_IQ4_XS)
  [[unroll]] for (uint i = 0u; i < 4u; ++i) qword[i] = w32(b + 4u + 8u * chunk + 2u * i);
  const uint ls = ((wbyte(b, 4u + (chunk >> 1)) >> (4u * (chunk & 1u))) & 0xFu) |
                  (((uint(w16[b + 1u]) >> (2u * chunk)) & 3u) << 4);
  const float d = whalf(b, 0u) * float(int(ls) - 32);
#else
  // 17-byte blocks: the chunk's codes start at an odd byte, so they are
  // gathered byte by byte.
  const uint o = 17u * chunk;
  [[unroll]] for (uint i = 0u; i < 4u; ++i) {
    qword[i] = wbyte(b, o + 1u + 4u * i) | (wbyte(b, o + 2u + 4u * i) << 8) | (wbyte(b, o + 3u + 4u * i) << 16) |
               (wbyte(b, o + 4u + 4u * i) << 24);
  }
  const float d = ldexp(1.0, int(wbyte(b, o)) - 128);
#endif
  uint w[8];
  nibble_words(qword, w);
  block_columns(w, d, 0.0, c, token0, sums);
}

#elif defined(TYPE_Q2_K) || defined(TYPE_Q3_K)
// Two 16-value halves with their own scales. Q2_K: codes 0..3 with a
// scale and a min per half, so the min takes each half's activation code
// sum (packed dot products with ones). Q3_K: signed codes q - 4 (the high
// bit set means no offset) with a signed 6-bit scale per half.
void chunk_dot_int(uint b, uint chunk, uint c, uint token0, inout float sums[MAX_COLS]) {
  const uint n = chunk >> 2, jj = chunk & 3u;
  uint w[8];
#ifdef TYPE_Q2_K
  [[unroll]] for (uint i = 0u; i < 8u; ++i) w[i] = (w32(b + 8u + 16u * n + 2u * i) >> (2u * jj)) & 0x03030303u;
  const float d = whalf(b, 80u), dmin = whalf(b, 82u);
  float dl[2], ml[2];
  [[unroll]] for (uint h = 0u; h < 2u; ++h) {
    const uint sc = wbyte(b, 8u * n + 2u * jj + h);
    dl[h] = d * float(sc & 0xFu);
    ml[h] = dmin * float(sc >> 4);
  }
#else
  [[unroll]] for (uint i = 0u; i < 8u; ++i) {
    const uint q = (w32(b + 16u + 16u * n + 2u * i) >> (2u * jj)) & 0x03030303u;
    const uint high = (w32(b + 2u * i) >> (4u * n + jj)) & 0x01010101u;
    w[i] = minus_bytes(q | (high << 2), 4u);
  }
  const float d = whalf(b, 108u);
  float dl[2];
  [[unroll]] for (uint h = 0u; h < 2u; ++h) {
    const uint i = 8u * n + 2u * jj + h;  // 6-bit scale index, 0..15
    const uint lo = i < 8u ? (wbyte(b, 96u + i) & 0xFu) : (wbyte(b, 96u + i - 8u) >> 4);
    const uint hi = (wbyte(b, 104u + (i & 3u)) >> (2u * (i >> 2))) & 3u;
    dl[h] = d * float(int(lo | (hi << 4)) - 32);
  }
#endif
  for (uint col = 0u; col < MV_COLS; ++col) {
    const uint ci = codes_index(token0 + col, c);
    const uvec4 x0 = codes4[ci], x1 = codes4[ci + 1u];
    const int lo = SDOT(w[0], x0.x) + SDOT(w[1], x0.y) + SDOT(w[2], x0.z) + SDOT(w[3], x0.w);
    const int hi = SDOT(w[4], x1.x) + SDOT(w[5], x1.y) + SDOT(w[6], x1.z) + SDOT(w[7], x1.w);
    float sum = dl[0] * float(lo) + dl[1] * float(hi);
#ifdef TYPE_Q2_K
    const uint ones = 0x01010101u;
    const int xlo = SDOT(ones, x0.x) + SDOT(ones, x0.y) + SDOT(ones, x0.z) + SDOT(ones, x0.w);
    const int xhi = SDOT(ones, x1.x) + SDOT(ones, x1.y) + SDOT(ones, x1.z) + SDOT(ones, x1.w);
    sum -= ml[0] * float(xlo) + ml[1] * float(xhi);
#endif
    sums[col] += scales[scales_index(token0 + col, c)].x * sum;
  }
}

#elif defined(TYPE_Q6_K)
// Two 16-value halves with their own signed scales; codes are q - 32.
void chunk_dot_int(uint b, uint chunk, uint c, uint token0, inout float sums[MAX_COLS]) {
  const uint n = chunk >> 2, k = chunk & 3u;
  const uint lbase = b + 32u * n + 16u * (k & 1u);
  const uint hbase = b + 64u + 16u * n;
  const uint lshift = k >= 2u ? 4u : 0u, hshift = 2u * k;
  uint w[8];
  [[unroll]] for (uint i = 0u; i < 8u; ++i) {
    const uint lo = (w32(lbase + 2u * i) >> lshift) & 0x0F0F0F0Fu;
    const uint hi = (w32(hbase + 2u * i) >> hshift) & 0x03030303u;
    w[i] = minus_bytes(lo | (hi << 4), 32u);
  }
  const float s0 = float(sext8(wbyte(b, 192u + 8u * n + 2u * k)));
  const float s1 = float(sext8(wbyte(b, 193u + 8u * n + 2u * k)));
  const float d = whalf(b, 208u);
  for (uint col = 0u; col < MV_COLS; ++col) {
    const uint ci = codes_index(token0 + col, c);
    const uvec4 x0 = codes4[ci], x1 = codes4[ci + 1u];
    const int lo = SDOT(w[0], x0.x) + SDOT(w[1], x0.y) + SDOT(w[2], x0.z) + SDOT(w[3], x0.w);
    const int hi = SDOT(w[4], x1.x) + SDOT(w[5], x1.y) + SDOT(w[6], x1.z) + SDOT(w[7], x1.w);
    sums[col] += d * scales[scales_index(token0 + col, c)].x * (s0 * float(lo) + s1 * float(hi));
  }
}
#endif

#endif  // HEARTH_SHADERS_CHUNK_DOT_INT_GLSL
