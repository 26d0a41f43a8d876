// Reference conversions of the K-quant super-block formats (Q2_K .. Q6_K)
// and IQ4_XS. Scales are chosen by the searches in quant_search.cpp, then
// quantized themselves (to 4, 6 or 8 bits) against one half-float
// super-scale, and the values re-quantized against the rounded scales.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "hearth/engine/quant/blocks.h"
#include "hearth/engine/quant/fp16.h"
#include "ref_internal.h"

namespace hearth::quant::detail {
namespace {

// Packs 256 two-bit levels: byte l of each 32-byte group holds values
// l, l+32, l+64, l+96 of its 128-value half in bits 0-1, 2-3, 4-5, 6-7.
void pack_2bit(const uint8_t* L, uint8_t* qs) {
  for (int j = 0; j < kQK_K; j += 128) {
    for (int l = 0; l < 32; ++l) {
      qs[j / 4 + l] = static_cast<uint8_t>(L[j + l] | (L[j + l + 32] << 2) | (L[j + l + 64] << 4) |
                                           (L[j + l + 96] << 6));
    }
  }
}

}  // namespace

void dequantize_q2_k(const void* src, float* y, int64_t n) {
  const auto* b = static_cast<const BlockQ2_K*>(src);
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    const float d = fp16_to_fp32(b[i].d);
    const float dmin = fp16_to_fp32(b[i].dmin);
    const uint8_t* q = b[i].qs;
    int is = 0;
    for (int half = 0; half < 2; ++half, q += 32) {
      for (int shift = 0; shift < 8; shift += 2) {
        for (int part = 0; part < 2; ++part) {
          const uint8_t sc = b[i].scales[is++];
          const float dl = d * static_cast<float>(sc & 0xF);
          const float ml = dmin * static_cast<float>(sc >> 4);
          for (int l = 0; l < 16; ++l) *y++ = dl * static_cast<float>((q[l + 16 * part] >> shift) & 3) - ml;
        }
      }
    }
  }
}

void quantize_q2_k(const float* x, void* dst, int64_t n) { quantize_q2_k_with(x, dst, n, make_qkx2_quants); }

void quantize_q2_k_with(const float* x, void* dst, int64_t n, Qkx2Fn search) {
  auto* b = static_cast<BlockQ2_K*>(dst);
  uint8_t L[kQK_K];
  uint8_t Laux[16];
  float weights[16];
  float mins[kQK_K / 16];
  float scales[kQK_K / 16];
  constexpr float q4scale = 15.f;
  for (int64_t i = 0; i < n / kQK_K; ++i, x += kQK_K) {
    float max_scale = 0, max_min = 0;
    for (int j = 0; j < kQK_K / 16; ++j) {
      for (int l = 0; l < 16; ++l) weights[l] = std::fabs(x[16 * j + l]);
      scales[j] = search(16, 3, x + 16 * j, weights, L + 16 * j, &mins[j], Laux, -0.5f,
                                   0.1f, 15, true);
      max_scale = std::max(max_scale, scales[j]);
      max_min = std::max(max_min, mins[j]);
    }
    if (max_scale > 0) {
      const float iscale = q4scale / max_scale;
      for (int j = 0; j < kQK_K / 16; ++j) b[i].scales[j] = static_cast<uint8_t>(nearest_int(iscale * scales[j]));
      b[i].d = fp32_to_fp16(max_scale / q4scale);
    } else {
      std::memset(b[i].scales, 0, sizeof(b[i].scales));
      b[i].d = fp32_to_fp16(0.f);
    }
    if (max_min > 0) {
      const float iscale = q4scale / max_min;
      for (int j = 0; j < kQK_K / 16; ++j) {
        b[i].scales[j] = static_cast<uint8_t>(b[i].scales[j] | (nearest_int(iscale * mins[j]) << 4));
      }
      b[i].dmin = fp32_to_fp16(max_min / q4scale);
    } else {
      b[i].dmin = fp32_to_fp16(0.f);
    }
    for (int j = 0; j < kQK_K / 16; ++j) {
      const float d = fp16_to_fp32(b[i].d) * static_cast<float>(b[i].scales[j] & 0xF);
      if (d == 0) continue;
      const float dm = fp16_to_fp32(b[i].dmin) * static_cast<float>(b[i].scales[j] >> 4);
      for (int ii = 0; ii < 16; ++ii) {
        L[16 * j + ii] = static_cast<uint8_t>(std::clamp(nearest_int((x[16 * j + ii] + dm) / d), 0, 3));
      }
    }
    pack_2bit(L, b[i].qs);
  }
}

void dequantize_q3_k(const void* src, float* y, int64_t n) {
  const auto* b = static_cast<const BlockQ3_K*>(src);
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    const float d_all = fp16_to_fp32(b[i].d);
    const uint8_t* q = b[i].qs;
    uint8_t m = 1;
    int is = 0;
    for (int half = 0; half < 2; ++half, q += 32) {
      for (int shift = 0; shift < 8; shift += 2, m = static_cast<uint8_t>(m << 1)) {
        for (int part = 0; part < 2; ++part) {
          const float dl = d_all * static_cast<float>(q3k_scale(b[i].scales, is++));
          for (int l = 16 * part; l < 16 * part + 16; ++l) {
            const int v = ((q[l] >> shift) & 3) - ((b[i].hmask[l] & m) ? 0 : 4);
            *y++ = dl * static_cast<float>(v);
          }
        }
      }
    }
  }
}

void quantize_q3_k(const float* x, void* dst, int64_t n) {
  auto* b = static_cast<BlockQ3_K*>(dst);
  int8_t L[kQK_K];
  float scales[kQK_K / 16];
  for (int64_t i = 0; i < n / kQK_K; ++i, x += kQK_K) {
    float max_scale = 0, amax = 0;
    for (int j = 0; j < kQK_K / 16; ++j) {
      scales[j] = make_q3_quants(16, 4, x + 16 * j, L + 16 * j, true);
      const float scale = std::fabs(scales[j]);
      if (scale > amax) {
        amax = scale;
        max_scale = scales[j];
      }
    }
    std::memset(b[i].scales, 0, sizeof(b[i].scales));
    if (max_scale != 0) {
      const float iscale = -32.f / max_scale;
      for (int j = 0; j < kQK_K / 16; ++j) {
        int l = std::clamp(nearest_int(iscale * scales[j]), -32, 31) + 32;
        if (j < 8) {
          b[i].scales[j] = static_cast<uint8_t>(l & 0xF);
        } else {
          b[i].scales[j - 8] = static_cast<uint8_t>(b[i].scales[j - 8] | ((l & 0xF) << 4));
        }
        l >>= 4;
        b[i].scales[j % 4 + 8] = static_cast<uint8_t>(b[i].scales[j % 4 + 8] | (l << (2 * (j / 4))));
      }
      b[i].d = fp32_to_fp16(1 / iscale);
    } else {
      b[i].d = fp32_to_fp16(0.f);
    }
    for (int j = 0; j < kQK_K / 16; ++j) {
      const float d = fp16_to_fp32(b[i].d) * static_cast<float>(q3k_scale(b[i].scales, j));
      if (d == 0) continue;
      for (int ii = 0; ii < 16; ++ii) {
        L[16 * j + ii] = static_cast<int8_t>(std::clamp(nearest_int(x[16 * j + ii] / d), -4, 3) + 4);
      }
    }
    // The high bit of value j goes to bit (j / 32) of hmask[j % 32].
    std::memset(b[i].hmask, 0, sizeof(b[i].hmask));
    uint8_t u[kQK_K];
    for (int j = 0; j < kQK_K; ++j) {
      int l = L[j];
      if (l > 3) {
        b[i].hmask[j % 32] = static_cast<uint8_t>(b[i].hmask[j % 32] | (1 << (j / 32)));
        l -= 4;
      }
      u[j] = static_cast<uint8_t>(l);
    }
    pack_2bit(u, b[i].qs);
  }
}

void dequantize_q4_k(const void* src, float* y, int64_t n) {
  const auto* b = static_cast<const BlockQ4_K*>(src);
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    const float d = fp16_to_fp32(b[i].d);
    const float dmin = fp16_to_fp32(b[i].dmin);
    const uint8_t* q = b[i].qs;
    for (int j = 0; j < kQK_K / 64; ++j, q += 32) {
      uint8_t sc, m;
      scale_min_k4(2 * j, b[i].scales, &sc, &m);
      const float d1 = d * sc, m1 = dmin * m;
      scale_min_k4(2 * j + 1, b[i].scales, &sc, &m);
      const float d2 = d * sc, m2 = dmin * m;
      for (int l = 0; l < 32; ++l) *y++ = d1 * static_cast<float>(q[l] & 0xF) - m1;
      for (int l = 0; l < 32; ++l) *y++ = d2 * static_cast<float>(q[l] >> 4) - m2;
    }
  }
}

namespace {

// Shared by Q4_K and Q5_K: eight 32-value sub-blocks with asymmetric levels
// 0..nmax; scales and mins to six bits. Writes d, dmin, the 12 scale bytes
// and the levels L (0..nmax) of all 256 values.
void quantize_k_subblocks(const float* x, int nmax, float rmin, int nstep, uint16_t* d_out,
                          uint16_t* dmin_out, uint8_t* packed, uint8_t* L, Qkx2Fn search) {
  uint8_t Laux[32];
  float weights[32];
  float mins[kQK_K / 32];
  float scales[kQK_K / 32];
  float sum_x2 = 0;
  for (int l = 0; l < kQK_K; ++l) sum_x2 += x[l] * x[l];
  const float av_x = std::sqrt(sum_x2 / kQK_K);
  float max_scale = 0, max_min = 0;
  for (int j = 0; j < kQK_K / 32; ++j) {
    for (int l = 0; l < 32; ++l) weights[l] = av_x + std::fabs(x[32 * j + l]);
    scales[j] = search(32, nmax, x + 32 * j, weights, L + 32 * j, &mins[j], Laux, rmin,
                                 0.1f, nstep, false);
    max_scale = std::max(max_scale, scales[j]);
    max_min = std::max(max_min, mins[j]);
  }
  const float inv_scale = max_scale > 0 ? 63.f / max_scale : 0.f;
  const float inv_min = max_min > 0 ? 63.f / max_min : 0.f;
  for (int j = 0; j < kQK_K / 32; ++j) {
    const int ls = std::min(63, nearest_int(inv_scale * scales[j]));
    const int lm = std::min(63, nearest_int(inv_min * mins[j]));
    if (j < 4) {
      packed[j] = static_cast<uint8_t>(ls);
      packed[j + 4] = static_cast<uint8_t>(lm);
    } else {
      packed[j + 4] = static_cast<uint8_t>((ls & 0xF) | ((lm & 0xF) << 4));
      packed[j - 4] = static_cast<uint8_t>(packed[j - 4] | ((ls >> 4) << 6));
      packed[j] = static_cast<uint8_t>(packed[j] | ((lm >> 4) << 6));
    }
  }
  *d_out = fp32_to_fp16(max_scale / 63.f);
  *dmin_out = fp32_to_fp16(max_min / 63.f);
  for (int j = 0; j < kQK_K / 32; ++j) {
    uint8_t sc, m;
    scale_min_k4(j, packed, &sc, &m);
    const float d = fp16_to_fp32(*d_out) * sc;
    if (d == 0) continue;
    const float dm = fp16_to_fp32(*dmin_out) * m;
    for (int ii = 0; ii < 32; ++ii) {
      L[32 * j + ii] = static_cast<uint8_t>(std::clamp(nearest_int((x[32 * j + ii] + dm) / d), 0, nmax));
    }
  }
}

}  // namespace

void quantize_q4_k(const float* x, void* dst, int64_t n) { quantize_q4_k_with(x, dst, n, make_qkx2_quants); }

void quantize_q4_k_with(const float* x, void* dst, int64_t n, Qkx2Fn search) {
  auto* b = static_cast<BlockQ4_K*>(dst);
  uint8_t L[kQK_K];
  for (int64_t i = 0; i < n / kQK_K; ++i, x += kQK_K) {
    quantize_k_subblocks(x, 15, -1.f, 20, &b[i].d, &b[i].dmin, b[i].scales, L, search);
    uint8_t* q = b[i].qs;
    for (int j = 0; j < kQK_K; j += 64, q += 32) {
      for (int l = 0; l < 32; ++l) q[l] = static_cast<uint8_t>(L[j + l] | (L[j + l + 32] << 4));
    }
  }
}

void dequantize_q5_k(const void* src, float* y, int64_t n) {
  const auto* b = static_cast<const BlockQ5_K*>(src);
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    const float d = fp16_to_fp32(b[i].d);
    const float dmin = fp16_to_fp32(b[i].dmin);
    const uint8_t* ql = b[i].qs;
    for (int j = 0; j < kQK_K / 64; ++j, ql += 32) {
      uint8_t sc, m;
      scale_min_k4(2 * j, b[i].scales, &sc, &m);
      const float d1 = d * sc, m1 = dmin * m;
      scale_min_k4(2 * j + 1, b[i].scales, &sc, &m);
      const float d2 = d * sc, m2 = dmin * m;
      const int u1 = 1 << (2 * j), u2 = 2 << (2 * j);
      for (int l = 0; l < 32; ++l) {
        *y++ = d1 * static_cast<float>((ql[l] & 0xF) + ((b[i].qh[l] & u1) ? 16 : 0)) - m1;
      }
      for (int l = 0; l < 32; ++l) {
        *y++ = d2 * static_cast<float>((ql[l] >> 4) + ((b[i].qh[l] & u2) ? 16 : 0)) - m2;
      }
    }
  }
}

void quantize_q5_k(const float* x, void* dst, int64_t n) { quantize_q5_k_with(x, dst, n, make_qkx2_quants); }

void quantize_q5_k_with(const float* x, void* dst, int64_t n, Qkx2Fn search) {
  auto* b = static_cast<BlockQ5_K*>(dst);
  uint8_t L[kQK_K];
  for (int64_t i = 0; i < n / kQK_K; ++i, x += kQK_K) {
    quantize_k_subblocks(x, 31, -0.5f, 15, &b[i].d, &b[i].dmin, b[i].scales, L, search);
    std::memset(b[i].qh, 0, sizeof(b[i].qh));
    uint8_t* ql = b[i].qs;
    int m1 = 1, m2 = 2;
    for (int j = 0; j < kQK_K; j += 64, ql += 32, m1 <<= 2, m2 <<= 2) {
      for (int l = 0; l < 32; ++l) {
        int l1 = L[j + l];
        if (l1 > 15) {
          l1 -= 16;
          b[i].qh[l] = static_cast<uint8_t>(b[i].qh[l] | m1);
        }
        int l2 = L[j + l + 32];
        if (l2 > 15) {
          l2 -= 16;
          b[i].qh[l] = static_cast<uint8_t>(b[i].qh[l] | m2);
        }
        ql[l] = static_cast<uint8_t>(l1 | (l2 << 4));
      }
    }
  }
}

void dequantize_q6_k(const void* src, float* y, int64_t n) {
  const auto* b = static_cast<const BlockQ6_K*>(src);
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    const float d = fp16_to_fp32(b[i].d);
    const uint8_t* ql = b[i].ql;
    const uint8_t* qh = b[i].qh;
    const int8_t* sc = b[i].scales;
    for (int half = 0; half < 2; ++half, y += 128, ql += 64, qh += 32, sc += 8) {
      for (int l = 0; l < 32; ++l) {
        const int is = l / 16;
        const int q1 = ((ql[l] & 0xF) | ((qh[l] & 3) << 4)) - 32;
        const int q2 = ((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32;
        const int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
        const int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
        y[l] = d * static_cast<float>(sc[is] * q1);
        y[l + 32] = d * static_cast<float>(sc[is + 2] * q2);
        y[l + 64] = d * static_cast<float>(sc[is + 4] * q3);
        y[l + 96] = d * static_cast<float>(sc[is + 6] * q4);
      }
    }
  }
}

void quantize_q6_k(const float* x, void* dst, int64_t n) { quantize_q6_k_with(x, dst, n, make_qx_quants); }

void quantize_q6_k_with(const float* x, void* dst, int64_t n, QxFn search) {
  auto* b = static_cast<BlockQ6_K*>(dst);
  int8_t L[kQK_K];
  float scales[kQK_K / 16];
  for (int64_t i = 0; i < n / kQK_K; ++i, x += kQK_K) {
    float max_scale = 0, max_abs_scale = 0;
    for (int ib = 0; ib < kQK_K / 16; ++ib) {
      scales[ib] = search(16, 32, x + 16 * ib, L + 16 * ib, 1);
      const float abs_scale = std::fabs(scales[ib]);
      if (abs_scale > max_abs_scale) {
        max_abs_scale = abs_scale;
        max_scale = scales[ib];
      }
    }
    if (max_abs_scale < kGroupMaxEps) {
      std::memset(&b[i], 0, sizeof(b[i]));
      continue;
    }
    const float iscale = -128.f / max_scale;
    b[i].d = fp32_to_fp16(1 / iscale);
    for (int ib = 0; ib < kQK_K / 16; ++ib) {
      b[i].scales[ib] = static_cast<int8_t>(std::min(127, nearest_int(iscale * scales[ib])));
    }
    for (int j = 0; j < kQK_K / 16; ++j) {
      const float d = fp16_to_fp32(b[i].d) * b[i].scales[j];
      if (d == 0) continue;
      for (int ii = 0; ii < 16; ++ii) {
        L[16 * j + ii] = static_cast<int8_t>(std::clamp(nearest_int(x[16 * j + ii] / d), -32, 31) + 32);
      }
    }
    uint8_t* ql = b[i].ql;
    uint8_t* qh = b[i].qh;
    for (int j = 0; j < kQK_K; j += 128, ql += 64, qh += 32) {
      for (int l = 0; l < 32; ++l) {
        const int q1 = L[j + l] & 0xF, q2 = L[j + l + 32] & 0xF;
        const int q3 = L[j + l + 64] & 0xF, q4 = L[j + l + 96] & 0xF;
        ql[l] = static_cast<uint8_t>(q1 | (q3 << 4));
        ql[l + 32] = static_cast<uint8_t>(q2 | (q4 << 4));
        qh[l] = static_cast<uint8_t>((L[j + l] >> 4) | ((L[j + l + 32] >> 4) << 2) |
                                     ((L[j + l + 64] >> 4) << 4) | ((L[j + l + 96] >> 4) << 6));
      }
    }
  }
}

void dequantize_iq4_xs(const void* src, float* y, int64_t n) {
  const auto* b = static_cast<const BlockIQ4_XS*>(src);
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    const float d = fp16_to_fp32(b[i].d);
    const uint8_t* qs = b[i].qs;
    for (int ib = 0; ib < kQK_K / 32; ++ib, qs += 16, y += 32) {
      const float dl = d * static_cast<float>(iq4xs_scale(b[i], ib));
      for (int j = 0; j < 16; ++j) {
        y[j] = dl * static_cast<float>(kIq4Values[qs[j] & 0xF]);
        y[j + 16] = dl * static_cast<float>(kIq4Values[qs[j] >> 4]);
      }
    }
  }
}

void quantize_iq4_xs(const float* x, void* dst, int64_t n) {
  auto* b = static_cast<BlockIQ4_XS*>(dst);
  for (int64_t i = 0; i < n / kQK_K; ++i, x += kQK_K) {
    quantize_iq4_superblock(kQK_K, x, &b[i].d, b[i].qs, &b[i].scales_h, b[i].scales_l);
  }
}

}  // namespace hearth::quant::detail
