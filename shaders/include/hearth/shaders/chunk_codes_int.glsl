// chunk_codes(block_base, chunk, w, sc): one 32-value chunk of a weight row
// as eight words of four signed bytes (w) and its scales (sc), for the
// integer-dot products: the matvec (chunk_dot_int.glsl) and the prompt tiles
// (matmul.comp with INT_DOT) decode the weights through the same code.
// What sc holds depends on the format; tile_scales(sc) turns it into the
// tiles' common form (d_lo, d_hi, m_lo, m_hi), so that a chunk's product
// with activation codes x (scale d_x) is
//   d_x * (d_lo * lo + d_hi * hi + m_lo * sum(x lo) + m_hi * sum(x hi))
// where lo and hi are the integer dot products of code words 0-3 and 4-7
// (values 0-15 and 16-31 of the chunk).
// Codes that carry an offset (Q4_0: q - 8) are shifted into signed bytes;
// formats with a min (Q4_1, Q4_K, ...) take it times the activation's sum.
// The including shader declares `uint16_t w16[]` (weight_buffer.glsl) and,
// for Q4_K/Q5_K, `uvec4 w128[]` at binding 0.
#ifndef HEARTH_SHADERS_CHUNK_CODES_INT_GLSL
#define HEARTH_SHADERS_CHUNK_CODES_INT_GLSL
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

#if defined(TYPE_Q8_0)
// sc = (d, 0): symmetric signed codes.
void chunk_codes(uint b, uint chunk, out uint w[8], out vec4 sc) {
  [[unroll]] for (uint i = 0u; i < 8u; ++i) w[i] = w32(b + 1u + 2u * i);
  sc = vec4(whalf(b, 0u), 0.0, 0.0, 0.0);
}

#elif defined(TYPE_Q4_0) || defined(TYPE_Q4_1) || defined(TYPE_Q5_0) || defined(TYPE_Q5_1)
// Byte j of qs holds values j (low nibble) and j + 16 (high nibble); Q5's qh
// word, just before qs, holds the fifth bit of value j in bit j.
// sc = (d, m): x = d * code + m.
void chunk_codes(uint b, uint chunk, out uint w[8], out vec4 sc) {
#if defined(TYPE_Q4_0)
  const uint qs = b + 1u, offset = 8u;
#elif defined(TYPE_Q4_1)
  const uint qs = b + 2u, offset = 0u;
#elif defined(TYPE_Q5_0)
  const uint qs = b + 3u, offset = 16u;
#else
  const uint qs = b + 4u, offset = 0u;
#endif
#if defined(TYPE_Q4_1) || defined(TYPE_Q5_1)
  const float m = whalf(b, 2u);
#else
  const float m = 0.0;
#endif
#if defined(TYPE_Q5_0) || defined(TYPE_Q5_1)
  const uint qh = w32(qs - 2u);
#else
  const uint qh = 0u;  // four-bit codes: no fifth bits
#endif
  [[unroll]] for (uint i = 0u; i < 4u; ++i) {
    const uint q = w32(qs + 2u * i);
    w[i] = minus_bytes((q & 0x0F0F0F0Fu) | (spread4(qh >> (4u * i)) << 4), offset);
    w[i + 4u] = minus_bytes(((q >> 4) & 0x0F0F0F0Fu) | (spread4(qh >> (16u + 4u * i)) << 4), offset);
  }
  sc = vec4(whalf(b, 0u), m, 0.0, 0.0);
}

#elif defined(TYPE_Q4_K) || defined(TYPE_Q5_K)
// 144- and 176-byte blocks are 16-byte aligned: read as uvec4s (w128). The
// first holds d, dmin and the twelve bytes of 6-bit scales and mins.
// sc = (d * scale, -dmin * min).
void chunk_codes(uint b, uint chunk, out uint w[8], out vec4 sc) {
  const uint bi = b >> 3;
  const uvec4 head = w128[bi];
  const vec2 dm = unpackHalf2x16(head.x);
  uint s, mn;
  scale_min_k4_head(head, chunk, s, mn);
#ifdef TYPE_Q4_K
  const uint qi = bi + 1u + 2u * (chunk >> 1);
#else
  const uint qi = bi + 3u + 2u * (chunk >> 1);  // after 32 bytes of qh
  const uvec4 h0 = w128[bi + 1u], h1 = w128[bi + 2u];
  const uint hb[8] = uint[8](h0.x, h0.y, h0.z, h0.w, h1.x, h1.y, h1.z, h1.w);
#endif
  const uint shift = 4u * (chunk & 1u);
  const uvec4 q0 = w128[qi], q1 = w128[qi + 1u];
  w = uint[8](q0.x, q0.y, q0.z, q0.w, q1.x, q1.y, q1.z, q1.w);
  [[unroll]] for (uint i = 0u; i < 8u; ++i) {
    w[i] = (w[i] >> shift) & 0x0F0F0F0Fu;
#ifdef TYPE_Q5_K
    w[i] |= ((hb[i] >> chunk) & 0x01010101u) << 4;
#endif
  }
  sc = vec4(dm.x * float(s), -dm.y * float(mn), 0.0, 0.0);
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
// (high nibble); qword[i] is code bytes 4i..4i+3. sc = (d, 0).
void chunk_codes(uint b, uint chunk, out uint w[8], out vec4 sc) {
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
  [[unroll]] for (uint i = 0u; i < 4u; ++i) {
    w[i] = lookup4(qword[i] & 0x0F0F0F0Fu);
    w[i + 4u] = lookup4((qword[i] >> 4) & 0x0F0F0F0Fu);
  }
  sc = vec4(d, 0.0, 0.0, 0.0);
}

#elif defined(TYPE_Q2_K)
// Two 16-value halves, each with a scale and a min: codes 0..3,
// sc = (d_lo, d_hi, m_lo, m_hi) with x = d_half * code - m_half.
void chunk_codes(uint b, uint chunk, out uint w[8], out vec4 sc) {
  const uint n = chunk >> 2, jj = chunk & 3u;
  [[unroll]] for (uint i = 0u; i < 8u; ++i) w[i] = (w32(b + 8u + 16u * n + 2u * i) >> (2u * jj)) & 0x03030303u;
  const float d = whalf(b, 80u), dmin = whalf(b, 82u);
  [[unroll]] for (uint h = 0u; h < 2u; ++h) {
    const uint s = wbyte(b, 8u * n + 2u * jj + h);
    sc[h] = d * float(s & 0xFu);
    sc[2u + h] = dmin * float(s >> 4);
  }
}

#elif defined(TYPE_Q3_K)
// Signed codes q - 4 (the high bit set means no offset) with a signed 6-bit
// scale per 16-value half: sc = (d_lo, d_hi, 0, 0).
void chunk_codes(uint b, uint chunk, out uint w[8], out vec4 sc) {
  const uint n = chunk >> 2, jj = chunk & 3u;
  [[unroll]] for (uint i = 0u; i < 8u; ++i) {
    const uint q = (w32(b + 16u + 16u * n + 2u * i) >> (2u * jj)) & 0x03030303u;
    const uint high = (w32(b + 2u * i) >> (4u * n + jj)) & 0x01010101u;
    w[i] = minus_bytes(q | (high << 2), 4u);
  }
  const float d = whalf(b, 108u);
  sc = vec4(0.0);
  [[unroll]] for (uint h = 0u; h < 2u; ++h) {
    const uint i = 8u * n + 2u * jj + h;  // 6-bit scale index, 0..15
    const uint lo = i < 8u ? (wbyte(b, 96u + i) & 0xFu) : (wbyte(b, 96u + i - 8u) >> 4);
    const uint hi = (wbyte(b, 104u + (i & 3u)) >> (2u * (i >> 2))) & 3u;
    sc[h] = d * float(int(lo | (hi << 4)) - 32);
  }
}

#elif defined(TYPE_Q6_K)
// Codes q - 32 with a signed 8-bit scale per 16-value half and one d per
// block: sc = (scale_lo, scale_hi, d, 0).
void chunk_codes(uint b, uint chunk, out uint w[8], out vec4 sc) {
  const uint n = chunk >> 2, k = chunk & 3u;
  const uint lbase = b + 32u * n + 16u * (k & 1u);
  const uint hbase = b + 64u + 16u * n;
  const uint lshift = k >= 2u ? 4u : 0u, hshift = 2u * k;
  [[unroll]] for (uint i = 0u; i < 8u; ++i) {
    const uint lo = (w32(lbase + 2u * i) >> lshift) & 0x0F0F0F0Fu;
    const uint hi = (w32(hbase + 2u * i) >> hshift) & 0x03030303u;
    w[i] = minus_bytes(lo | (hi << 4), 32u);
  }
  sc = vec4(float(sext8(wbyte(b, 192u + 8u * n + 2u * k))), float(sext8(wbyte(b, 193u + 8u * n + 2u * k))),
            whalf(b, 208u), 0.0);
}
#endif

// sc in the tiles' form (d_lo, d_hi, m_lo, m_hi): see the top of the file.
vec4 tile_scales(vec4 sc) {
#if defined(TYPE_Q2_K)
  return vec4(sc.x, sc.y, -sc.z, -sc.w);
#elif defined(TYPE_Q3_K)
  return sc;
#elif defined(TYPE_Q6_K)
  return vec4(sc.z * sc.x, sc.z * sc.y, 0.0, 0.0);
#else
  return vec4(sc.x, sc.x, sc.y, sc.y);
#endif
}

#endif  // HEARTH_SHADERS_CHUNK_CODES_INT_GLSL
