// Weight access for one tensor type, chosen by a TYPE_* define. The including
// shader declares the weight buffer first:
//   F32:            float    wf32[]
//   everything else: uint16_t w16[]   (16-bit storage is the only requirement;
//                   every block size is even, so blocks start on 16-bit words)
// Quantized types expose dequant_chunk(block_base, chunk, v): the 32 values of
// chunk `chunk` (0..CHUNKS_PER_BLOCK-1) of the block starting at 16-bit word
// `block_base`. Plain types expose load_elem(index).
// Layouts follow the GGUF block formats (little-endian, f16 scales).
#ifndef HEARTH_SHADERS_WEIGHTS_GLSL
#define HEARTH_SHADERS_WEIGHTS_GLSL

#if defined(TYPE_F32) || defined(TYPE_F16) || defined(TYPE_BF16)
#define TYPE_PLAIN 1
#endif

#ifndef TYPE_F32
uint wbyte(uint base, uint off) {
  return (uint(w16[base + (off >> 1)]) >> ((off & 1u) << 3)) & 0xFFu;
}
float whalf(uint base, uint off) { return unpackHalf2x16(uint(w16[base + (off >> 1)])).x; }
#endif
int sext8(uint b) { return int(b << 24) >> 24; }

#if defined(TYPE_F32)
float load_elem(uint i) { return wf32[i]; }
#elif defined(TYPE_F16)
float load_elem(uint i) { return unpackHalf2x16(uint(w16[i])).x; }
#elif defined(TYPE_BF16)
float load_elem(uint i) { return uintBitsToFloat(uint(w16[i]) << 16); }

#elif defined(TYPE_Q8_0)
#define BLOCK_U16 17u
#define CHUNKS_PER_BLOCK 1u
void dequant_chunk(uint b, uint chunk, out float v[32]) {
  const float d = whalf(b, 0u);
  for (uint l = 0u; l < 16u; ++l) {
    const uint w = uint(w16[b + 1u + l]);
    v[2u * l] = d * float(sext8(w & 0xFFu));
    v[2u * l + 1u] = d * float(sext8(w >> 8));
  }
}

#elif defined(TYPE_Q4_0) || defined(TYPE_IQ4_NL)
#define BLOCK_U16 9u
#define CHUNKS_PER_BLOCK 1u
#ifdef TYPE_IQ4_NL
const float kIq4nl[16] = float[16](-127.0, -104.0, -83.0, -65.0, -49.0, -35.0, -22.0, -10.0,
                                   1.0, 13.0, 25.0, 38.0, 53.0, 69.0, 89.0, 113.0);
#define NIB(q) kIq4nl[q]
#else
#define NIB(q) (float(q) - 8.0)
#endif
void dequant_chunk(uint b, uint chunk, out float v[32]) {
  const float d = whalf(b, 0u);
  for (uint l = 0u; l < 8u; ++l) {
    const uint w = uint(w16[b + 1u + l]);
    v[2u * l] = d * NIB(w & 0xFu);
    v[2u * l + 1u] = d * NIB((w >> 8) & 0xFu);
    v[2u * l + 16u] = d * NIB((w >> 4) & 0xFu);
    v[2u * l + 17u] = d * NIB(w >> 12);
  }
}

#elif defined(TYPE_MXFP4)
// 17-byte blocks: two of them (34 bytes, 64 values) make one 16-bit-aligned
// unit, so rows must hold an even number of blocks (the host checks).
#define BLOCK_U16 17u
#define CHUNKS_PER_BLOCK 2u
const float kMxfp4[16] = float[16](0.0, 1.0, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0, 0.0, -1.0, -2.0, -3.0, -4.0, -6.0, -8.0, -12.0);
void dequant_chunk(uint b, uint chunk, out float v[32]) {
  const uint o = 17u * chunk;  // the chunk's block, in bytes from word b
  const float d = ldexp(1.0, int(wbyte(b, o)) - 128);
  for (uint l = 0u; l < 16u; ++l) {
    const uint q = wbyte(b, o + 1u + l);
    v[l] = d * kMxfp4[q & 0xFu];
    v[l + 16u] = d * kMxfp4[q >> 4];
  }
}

#elif defined(TYPE_Q4_1)
#define BLOCK_U16 10u
#define CHUNKS_PER_BLOCK 1u
void dequant_chunk(uint b, uint chunk, out float v[32]) {
  const float d = whalf(b, 0u);
  const float m = whalf(b, 2u);
  for (uint l = 0u; l < 8u; ++l) {
    const uint w = uint(w16[b + 2u + l]);
    v[2u * l] = d * float(w & 0xFu) + m;
    v[2u * l + 1u] = d * float((w >> 8) & 0xFu) + m;
    v[2u * l + 16u] = d * float((w >> 4) & 0xFu) + m;
    v[2u * l + 17u] = d * float(w >> 12) + m;
  }
}

#elif defined(TYPE_Q5_0) || defined(TYPE_Q5_1)
#ifdef TYPE_Q5_0
#define BLOCK_U16 11u
#define Q5_QH 1u
#else
#define BLOCK_U16 12u
#define Q5_QH 2u
#endif
#define CHUNKS_PER_BLOCK 1u
void dequant_chunk(uint b, uint chunk, out float v[32]) {
  const float d = whalf(b, 0u);
#ifdef TYPE_Q5_0
  const float m = -16.0 * d;
#else
  const float m = whalf(b, 2u);
#endif
  const uint qh = uint(w16[b + Q5_QH]) | (uint(w16[b + Q5_QH + 1u]) << 16);
  for (uint j = 0u; j < 16u; ++j) {
    const uint q = wbyte(b + Q5_QH + 2u, j);
    v[j] = d * float((q & 0xFu) | (((qh >> j) << 4) & 0x10u)) + m;
    v[j + 16u] = d * float((q >> 4) | ((qh >> (j + 12u)) & 0x10u)) + m;
  }
}

#elif defined(TYPE_Q2_K)
#define BLOCK_U16 42u
#define CHUNKS_PER_BLOCK 8u
void dequant_chunk(uint b, uint chunk, out float v[32]) {
  const float d = whalf(b, 80u);
  const float dmin = whalf(b, 82u);
  const uint n = chunk >> 2, shift = 2u * (chunk & 3u);
  for (uint h = 0u; h < 2u; ++h) {
    const uint sc = wbyte(b, 8u * n + 2u * (chunk & 3u) + h);
    const float dl = d * float(sc & 0xFu), ml = dmin * float(sc >> 4);
    for (uint l = 0u; l < 16u; ++l) {
      v[16u * h + l] = dl * float((wbyte(b, 16u + 32u * n + 16u * h + l) >> shift) & 3u) - ml;
    }
  }
}

#elif defined(TYPE_Q3_K)
#define BLOCK_U16 55u
#define CHUNKS_PER_BLOCK 8u
void dequant_chunk(uint b, uint chunk, out float v[32]) {
  const float d = whalf(b, 108u);
  const uint n = chunk >> 2, jj = chunk & 3u;
  for (uint h = 0u; h < 2u; ++h) {
    const uint i = 8u * n + 2u * jj + h;  // 6-bit scale index, 0..15
    const uint lo = i < 8u ? (wbyte(b, 96u + i) & 0xFu) : (wbyte(b, 96u + i - 8u) >> 4);
    const uint hi = (wbyte(b, 104u + (i & 3u)) >> (2u * (i >> 2))) & 3u;
    const float dl = d * float(int(lo | (hi << 4)) - 32);
    for (uint l = 16u * h; l < 16u * h + 16u; ++l) {
      const int q = int((wbyte(b, 32u + 32u * n + l) >> (2u * jj)) & 3u);
      const int high = int((wbyte(b, l) >> (4u * n + jj)) & 1u);
      v[l] = dl * float(q - (high != 0 ? 0 : 4));
    }
  }
}

#elif defined(TYPE_Q4_K) || defined(TYPE_Q5_K)
#ifdef TYPE_Q4_K
#define BLOCK_U16 72u
#define QS_OFF 16u
#else
#define BLOCK_U16 88u
#define QS_OFF 48u
#endif
#define CHUNKS_PER_BLOCK 8u
// The 6-bit scale and min of sub-block j, packed in 12 bytes at byte 4.
void scale_min_k4(uint b, uint j, out float sc, out float mn) {
  if (j < 4u) {
    sc = float(wbyte(b, 4u + j) & 63u);
    mn = float(wbyte(b, 8u + j) & 63u);
  } else {
    sc = float((wbyte(b, 8u + j) & 0xFu) | ((wbyte(b, j) >> 6) << 4));
    mn = float((wbyte(b, 8u + j) >> 4) | ((wbyte(b, 4u + j) >> 6) << 4));
  }
}
// The same from the block's first 16 bytes read as one uvec4 (d and dmin in
// .x, the 12 scale bytes in .y .z .w): matvec's wide loads.
void scale_min_k4_head(uvec4 head, uint chunk, out uint sc, out uint mn) {
  const uint sh = 8u * (chunk & 3u);
  if (chunk < 4u) {
    sc = (head.y >> sh) & 63u;
    mn = (head.z >> sh) & 63u;
  } else {
    sc = ((head.w >> sh) & 0xFu) | (((head.y >> sh) >> 6 & 3u) << 4);
    mn = ((head.w >> sh) >> 4 & 0xFu) | (((head.z >> sh) >> 6 & 3u) << 4);
  }
}
void dequant_chunk(uint b, uint chunk, out float v[32]) {
  float sc, mn;
  scale_min_k4(b, chunk, sc, mn);
  const float d = whalf(b, 0u) * sc;
  const float m = whalf(b, 2u) * mn;
  const uint qbase = b + (QS_OFF >> 1) + 16u * (chunk >> 1);
  const uint shift = 4u * (chunk & 1u);
#ifdef TYPE_Q5_K
  const uint hbase = b + 8u;  // qh: 32 bytes at byte 16
#endif
  for (uint l = 0u; l < 16u; ++l) {
    const uint w = uint(w16[qbase + l]) >> shift;
    uint q0 = w & 0xFu, q1 = (w >> 8) & 0xFu;
#ifdef TYPE_Q5_K
    const uint hw = uint(w16[hbase + l]) >> chunk;
    q0 |= (hw & 1u) << 4;
    q1 |= ((hw >> 8) & 1u) << 4;
#endif
    v[2u * l] = d * float(q0) - m;
    v[2u * l + 1u] = d * float(q1) - m;
  }
}

#elif defined(TYPE_Q6_K)
#define BLOCK_U16 105u
#define CHUNKS_PER_BLOCK 8u
void dequant_chunk(uint b, uint chunk, out float v[32]) {
  const float d = whalf(b, 208u);
  const uint n = chunk >> 2, k = chunk & 3u;
  const uint lbase = b + 32u * n + 16u * (k & 1u);  // ql bytes 64n + 32(k&1)
  const uint hbase = b + 64u + 16u * n;             // qh bytes 128 + 32n
  const uint lshift = k >= 2u ? 4u : 0u, hshift = 2u * k;
  for (uint h = 0u; h < 2u; ++h) {
    const float dl = d * float(sext8(wbyte(b, 192u + 8u * n + h + 2u * k)));
    for (uint l = 8u * h; l < 8u * h + 8u; ++l) {
      const uint lw = uint(w16[lbase + l]) >> lshift;
      const uint hw = uint(w16[hbase + l]) >> hshift;
      v[2u * l] = dl * float(int((lw & 0xFu) | ((hw & 3u) << 4)) - 32);
      v[2u * l + 1u] = dl * float(int(((lw >> 8) & 0xFu) | (((hw >> 8) & 3u) << 4)) - 32);
    }
  }
}

#elif defined(TYPE_IQ4_XS)
#define BLOCK_U16 68u
#define CHUNKS_PER_BLOCK 8u
const float kIq4nl[16] = float[16](-127.0, -104.0, -83.0, -65.0, -49.0, -35.0, -22.0, -10.0,
                                   1.0, 13.0, 25.0, 38.0, 53.0, 69.0, 89.0, 113.0);
void dequant_chunk(uint b, uint chunk, out float v[32]) {
  const uint scales_h = uint(w16[b + 1u]);
  const uint ls = ((wbyte(b, 4u + (chunk >> 1)) >> (4u * (chunk & 1u))) & 0xFu) |
                  (((scales_h >> (2u * chunk)) & 3u) << 4);
  const float dl = whalf(b, 0u) * float(int(ls) - 32);
  for (uint l = 0u; l < 8u; ++l) {
    const uint w = uint(w16[b + 4u + 8u * chunk + l]);
    v[2u * l] = dl * kIq4nl[w & 0xFu];
    v[2u * l + 1u] = dl * kIq4nl[(w >> 8) & 0xFu];
    v[2u * l + 16u] = dl * kIq4nl[(w >> 4) & 0xFu];
    v[2u * l + 17u] = dl * kIq4nl[w >> 12];
  }
}
#else
#error "weights.glsl: define one TYPE_* macro"
#endif

#endif  // HEARTH_SHADERS_WEIGHTS_GLSL
