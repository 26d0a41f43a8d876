// Scalar dequantization written straight from the GGUF block layouts, as the
// independent oracle for the shaders (which index the same data by 32-value
// chunks instead). Also builds random blocks with sane f16 scales.
#pragma once

#include <hearth/engine/quant/types.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "vulkan_test_env.h"

namespace hearth::vulkan::testing {

inline float f16_at(const uint8_t* p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  return from_half(h);
}

inline constexpr int8_t kIq4nlValues[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                            1,    13,   25,  38,  53,  69,  89,  113};

// 6-bit scale/min pair j of the 12-byte K-quant scale array.
inline void k4_scale_min(int j, const uint8_t* q, uint8_t& sc, uint8_t& m) {
  if (j < 4) {
    sc = q[j] & 63;
    m = q[j + 4] & 63;
  } else {
    sc = static_cast<uint8_t>((q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4));
    m = static_cast<uint8_t>((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
  }
}

// Dequantizes one block of `type` at `b` into `y` (block_elements values).
inline void dequant_block(DType type, const uint8_t* b, float* y) {
  switch (type) {
    case DType::Q8_0: {
      const float d = f16_at(b);
      for (int i = 0; i < 32; ++i) y[i] = d * static_cast<int8_t>(b[2 + i]);
      break;
    }
    case DType::Q4_0:
    case DType::IQ4_NL: {
      const float d = f16_at(b);
      for (int i = 0; i < 16; ++i) {
        const int lo = b[2 + i] & 0xF, hi = b[2 + i] >> 4;
        y[i] = type == DType::Q4_0 ? d * (lo - 8) : d * kIq4nlValues[lo];
        y[i + 16] = type == DType::Q4_0 ? d * (hi - 8) : d * kIq4nlValues[hi];
      }
      break;
    }
    case DType::Q4_1: {
      const float d = f16_at(b), m = f16_at(b + 2);
      for (int i = 0; i < 16; ++i) {
        y[i] = d * (b[4 + i] & 0xF) + m;
        y[i + 16] = d * (b[4 + i] >> 4) + m;
      }
      break;
    }
    case DType::Q5_0:
    case DType::Q5_1: {
      const bool q50 = type == DType::Q5_0;
      const float d = f16_at(b), m = q50 ? 0.0f : f16_at(b + 2);
      uint32_t qh;
      std::memcpy(&qh, b + (q50 ? 2 : 4), 4);
      const uint8_t* qs = b + (q50 ? 6 : 8);
      for (int i = 0; i < 16; ++i) {
        const int lo = (qs[i] & 0xF) | (((qh >> i) & 1) << 4);
        const int hi = (qs[i] >> 4) | (((qh >> (i + 16)) & 1) << 4);
        y[i] = q50 ? d * (lo - 16) : d * lo + m;
        y[i + 16] = q50 ? d * (hi - 16) : d * hi + m;
      }
      break;
    }
    case DType::Q2_K: {
      const uint8_t* scales = b;
      const uint8_t* q = b + 16;
      const float d = f16_at(b + 80), dmin = f16_at(b + 82);
      int is = 0;
      for (int n = 0; n < 256; n += 128) {
        for (int shift = 0; shift < 8; shift += 2) {
          for (int half = 0; half < 2; ++half) {
            const uint8_t sc = scales[is++];
            for (int l = 0; l < 16; ++l) {
              *y++ = d * (sc & 0xF) * ((q[16 * half + l] >> shift) & 3) - dmin * (sc >> 4);
            }
          }
        }
        q += 32;
      }
      break;
    }
    case DType::Q3_K: {
      const uint8_t* hm = b;
      const uint8_t* q = b + 32;
      const uint8_t* s = b + 96;
      const float d = f16_at(b + 108);
      int8_t scales[16];
      for (int i = 0; i < 16; ++i) {
        const int lo = i < 8 ? (s[i] & 0xF) : (s[i - 8] >> 4);
        const int hi = (s[8 + i % 4] >> (2 * (i / 4))) & 3;
        scales[i] = static_cast<int8_t>((lo | (hi << 4)) - 32);
      }
      int is = 0;
      uint8_t mask = 1;
      for (int n = 0; n < 256; n += 128) {
        for (int shift = 0; shift < 8; shift += 2) {
          for (int half = 0; half < 2; ++half) {
            const float dl = d * scales[is++];
            for (int l = 16 * half; l < 16 * half + 16; ++l) {
              *y++ = dl * (((q[l] >> shift) & 3) - ((hm[l] & mask) ? 0 : 4));
            }
          }
          mask = static_cast<uint8_t>(mask << 1);
        }
        q += 32;
      }
      break;
    }
    case DType::Q4_K:
    case DType::Q5_K: {
      const bool k5 = type == DType::Q5_K;
      const float d = f16_at(b), dmin = f16_at(b + 2);
      const uint8_t* scales = b + 4;
      const uint8_t* qh = b + 16;
      const uint8_t* ql = b + (k5 ? 48 : 16);
      int is = 0;
      for (int j = 0; j < 256; j += 64) {
        uint8_t sc, m;
        k4_scale_min(is, scales, sc, m);
        const float d1 = d * sc, m1 = dmin * m;
        k4_scale_min(is + 1, scales, sc, m);
        const float d2 = d * sc, m2 = dmin * m;
        for (int l = 0; l < 32; ++l) {
          const int h = k5 ? ((qh[l] >> is) & 1) << 4 : 0;
          *y++ = d1 * ((ql[l] & 0xF) + h) - m1;
        }
        for (int l = 0; l < 32; ++l) {
          const int h = k5 ? ((qh[l] >> (is + 1)) & 1) << 4 : 0;
          *y++ = d2 * ((ql[l] >> 4) + h) - m2;
        }
        ql += 32;
        is += 2;
      }
      break;
    }
    case DType::Q6_K: {
      const uint8_t* ql = b;
      const uint8_t* qh = b + 128;
      const int8_t* sc = reinterpret_cast<const int8_t*>(b + 192);
      const float d = f16_at(b + 208);
      for (int n = 0; n < 256; n += 128) {
        for (int l = 0; l < 32; ++l) {
          const int is = l / 16;
          const int q1 = ((ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32;
          const int q2 = ((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32;
          const int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
          const int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
          y[l] = d * sc[is] * q1;
          y[l + 32] = d * sc[is + 2] * q2;
          y[l + 64] = d * sc[is + 4] * q3;
          y[l + 96] = d * sc[is + 6] * q4;
        }
        y += 128;
        ql += 64;
        qh += 32;
        sc += 8;
      }
      break;
    }
    case DType::IQ4_XS: {
      const float d = f16_at(b);
      uint16_t scales_h;
      std::memcpy(&scales_h, b + 2, 2);
      const uint8_t* scales_l = b + 4;
      const uint8_t* qs = b + 8;
      for (int ib = 0; ib < 8; ++ib) {
        const int ls = ((scales_l[ib / 2] >> (4 * (ib % 2))) & 0xF) | (((scales_h >> (2 * ib)) & 3) << 4);
        const float dl = d * (ls - 32);
        for (int j = 0; j < 16; ++j) {
          y[j] = dl * kIq4nlValues[qs[j] & 0xF];
          y[j + 16] = dl * kIq4nlValues[qs[j] >> 4];
        }
        y += 32;
        qs += 16;
      }
      break;
    }
    default:
      ADD_FAILURE() << "no reference dequantization for " << traits(type).name;
  }
}

// Byte offsets of the f16 scale fields of one block (set to sane values).
inline std::vector<size_t> half_fields(DType type) {
  switch (type) {
    case DType::Q8_0: case DType::Q4_0: case DType::IQ4_NL: case DType::Q5_0: return {0};
    case DType::Q4_1: case DType::Q5_1: return {0, 2};
    case DType::Q2_K: return {80, 82};
    case DType::Q3_K: return {108};
    case DType::Q4_K: case DType::Q5_K: return {0, 2};
    case DType::Q6_K: return {208};
    case DType::IQ4_XS: return {0};
    default: return {};
  }
}

// `rows` rows of `cols` values as random blocks; f16 scales within +-0.05.
inline std::vector<uint8_t> random_blocks(DType type, uint32_t rows, uint32_t cols, std::mt19937& rng) {
  const auto& t = traits(type);
  const size_t nblocks = static_cast<size_t>(rows) * (cols / t.block_elements);
  std::vector<uint8_t> data(nblocks * t.block_bytes);
  std::uniform_int_distribution<int> byte(0, 255);
  for (auto& v : data) v = static_cast<uint8_t>(byte(rng));
  std::uniform_real_distribution<float> scale(-0.05f, 0.05f);
  for (size_t blk = 0; blk < nblocks; ++blk) {
    for (size_t off : half_fields(type)) {
      const uint16_t h = to_half(scale(rng));
      std::memcpy(&data[blk * t.block_bytes + off], &h, 2);
    }
  }
  return data;
}

// All rows dequantized: [rows][cols].
inline std::vector<float> dequant_rows(DType type, const std::vector<uint8_t>& data, uint32_t rows, uint32_t cols) {
  const auto& t = traits(type);
  std::vector<float> out(static_cast<size_t>(rows) * cols);
  const size_t blocks = static_cast<size_t>(rows) * (cols / t.block_elements);
  for (size_t blk = 0; blk < blocks; ++blk) {
    dequant_block(type, &data[blk * t.block_bytes], &out[blk * t.block_elements]);
  }
  return out;
}

}  // namespace hearth::vulkan::testing
