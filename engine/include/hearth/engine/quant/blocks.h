// Block layouts of the quantized tensor formats, byte for byte as GGUF files
// store them (the reference engine's structs). Scales named `d`/`dmin`/`m`
// are IEEE half floats stored as raw bits (see fp16.h) unless noted.
//
// Legacy formats hold 32 values per block; K-quants and IQ4_XS hold a
// 256-value super-block split into sub-blocks with their own small scales.
#pragma once

#include <cstddef>
#include <cstdint>

namespace hearth::quant {

inline constexpr int kQK = 32;    // values per block of the legacy formats and IQ4_NL
inline constexpr int kQK_K = 256; // values per super-block of the K-quants and IQ4_XS

// The non-uniform 4-bit codebook shared by IQ4_NL and IQ4_XS.
inline constexpr int8_t kIq4Values[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                          1,    13,   25,  38,  53,  69,  89,  113};

// x = d * (q - 8); qs[j] holds value j in its low nibble and value j+16 in its high one.
struct BlockQ4_0 {
  uint16_t d;
  uint8_t qs[kQK / 2];
};
// x = d * q + m
struct BlockQ4_1 {
  uint16_t d;
  uint16_t m;
  uint8_t qs[kQK / 2];
};
// x = d * (q - 16); bit j of qh (little-endian) is bit 4 of value j.
struct BlockQ5_0 {
  uint16_t d;
  uint8_t qh[4];
  uint8_t qs[kQK / 2];
};
// x = d * q + m
struct BlockQ5_1 {
  uint16_t d;
  uint16_t m;
  uint8_t qh[4];
  uint8_t qs[kQK / 2];
};
// x = d * q
struct BlockQ8_0 {
  uint16_t d;
  int8_t qs[kQK];
};
// 2-bit: 16 sub-blocks of 16; scales[i] = scale (low nibble) | min (high nibble).
struct BlockQ2_K {
  uint8_t scales[kQK_K / 16];
  uint8_t qs[kQK_K / 4];
  uint16_t d;
  uint16_t dmin;
};
// 3-bit: low 2 bits in qs, high bit in hmask, 16 six-bit signed scales packed in 12 bytes.
struct BlockQ3_K {
  uint8_t hmask[kQK_K / 8];
  uint8_t qs[kQK_K / 4];
  uint8_t scales[12];
  uint16_t d;
};
// 4-bit: 8 sub-blocks of 32 with six-bit scales and mins packed in 12 bytes.
struct BlockQ4_K {
  uint16_t d;
  uint16_t dmin;
  uint8_t scales[12];
  uint8_t qs[kQK_K / 2];
};
// 5-bit: as Q4_K plus one high bit per value in qh.
struct BlockQ5_K {
  uint16_t d;
  uint16_t dmin;
  uint8_t scales[12];
  uint8_t qh[kQK_K / 8];
  uint8_t qs[kQK_K / 2];
};
// 6-bit: low 4 bits in ql, high 2 in qh, 16 signed 8-bit scales; x = d * sc * (q - 32).
struct BlockQ6_K {
  uint8_t ql[kQK_K / 2];
  uint8_t qh[kQK_K / 4];
  int8_t scales[kQK_K / 16];
  uint16_t d;
};
// Activation format of the K-quant dot products: d is a float (not half),
// bsums[i] is the sum of qs[16 i .. 16 i + 15].
struct BlockQ8_K {
  float d;
  int8_t qs[kQK_K];
  int16_t bsums[kQK_K / 16];
};
// x = d * kIq4Values[q]
struct BlockIQ4_NL {
  uint16_t d;
  uint8_t qs[kQK / 2];
};
// 8 sub-blocks of 32; six-bit scale of sub-block i: low 4 bits in scales_l
// (nibble i % 2 of byte i / 2), high 2 bits at bit 2 i of scales_h; offset by 32.
struct BlockIQ4_XS {
  uint16_t d;
  uint16_t scales_h;
  uint8_t scales_l[kQK_K / 64];
  uint8_t qs[kQK_K / 2];
};

// MXFP4 (OCP microscaling): 32 E2M1 values sharing one power-of-two scale.
// x = kMxfp4Values[q] * 2^(e - 128): the table holds the E2M1 values doubled
// (0, 0.5, 1, 1.5, 2, 3, 4, 6 and their negatives, times 2), so the half of
// the E8M0 scale 2^(e - 127) undoes it. qs as in Q4_0.
inline constexpr int8_t kMxfp4Values[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};
struct BlockMXFP4 {
  uint8_t e;
  uint8_t qs[kQK / 2];
};
// 2^(e - 128) as a float, exactly (e 0 and 1 give the subnormals 2^-128, 2^-127).
inline float mxfp4_half_scale(uint8_t e) {
  const uint32_t bits = e < 2 ? (0x00200000u << e) : (static_cast<uint32_t>(e) - 1u) << 23;
  float f;
  __builtin_memcpy(&f, &bits, sizeof f);
  return f;
}

static_assert(sizeof(BlockQ4_0) == 18);
static_assert(sizeof(BlockQ4_1) == 20);
static_assert(sizeof(BlockQ5_0) == 22);
static_assert(sizeof(BlockQ5_1) == 24);
static_assert(sizeof(BlockQ8_0) == 34);
static_assert(sizeof(BlockQ2_K) == 84);
static_assert(sizeof(BlockQ3_K) == 110);
static_assert(sizeof(BlockQ4_K) == 144);
static_assert(sizeof(BlockQ5_K) == 176);
static_assert(sizeof(BlockQ6_K) == 210);
static_assert(sizeof(BlockQ8_K) == 292);
static_assert(sizeof(BlockIQ4_NL) == 18);
static_assert(sizeof(BlockIQ4_XS) == 136);
static_assert(sizeof(BlockMXFP4) == 17);

}  // namespace hearth::quant
