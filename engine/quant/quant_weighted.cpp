// Importance-weighted quantizers: the block searches of quant_search.cpp
// with each value's error weighted by how much the model's outputs depend on
// it. The weight of value j is importance[j] * sqrt(sigma2 + x_j^2), where
// importance[j] is the mean squared activation that multiplies column j (an
// importance matrix) and sigma2 a mean square of the block's values; these
// follow the reference engine's published weighting, so a file quantized with
// the same importance data has the same weighted error.
#include <hearth/engine/quant/weighted.h>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "hearth/engine/quant/blocks.h"
#include "hearth/engine/quant/fp16.h"
#include "ref_internal.h"

namespace hearth::quant {
namespace detail {
namespace {

// Symmetric levels in [-nmax, nmax - 1] (stored offset by nmax) minimizing
// sum w_i (x_i - scale * l_i)^2 over 19 candidate scales around -nmax / max.
float weighted_qx(int n, int nmax, const float* x, int8_t* L, const float* w) {
  float max = 0, amax = 0;
  for (int i = 0; i < n; ++i) {
    const float ax = std::fabs(x[i]);
    if (ax > amax) {
      amax = ax;
      max = x[i];
    }
  }
  if (amax < kGroupMaxEps) {
    std::memset(L, 0, static_cast<size_t>(n));
    return 0.f;
  }
  const auto level = [&](float s, int i) { return std::clamp(nearest_int(s * x[i]), -nmax, nmax - 1); };
  float iscale = -static_cast<float>(nmax) / max;
  float sumlx = 0, suml2 = 0;
  for (int i = 0; i < n; ++i) {
    const int l = level(iscale, i);
    L[i] = static_cast<int8_t>(l + nmax);
    sumlx += w[i] * x[i] * static_cast<float>(l);
    suml2 += w[i] * static_cast<float>(l * l);
  }
  float scale = suml2 != 0 ? sumlx / suml2 : 0.0f;
  float best = scale * sumlx;
  for (int is = -9; is <= 9; ++is) {
    if (is == 0) continue;
    iscale = -(static_cast<float>(nmax) + 0.1f * static_cast<float>(is)) / max;
    sumlx = suml2 = 0;
    for (int i = 0; i < n; ++i) {
      const int l = level(iscale, i);
      sumlx += w[i] * x[i] * static_cast<float>(l);
      suml2 += w[i] * static_cast<float>(l * l);
    }
    if (suml2 > 0 && sumlx * sumlx > best * suml2) {
      for (int i = 0; i < n; ++i) L[i] = static_cast<int8_t>(nmax + level(iscale, i));
      scale = sumlx / suml2;
      best = scale * sumlx;
    }
  }
  return scale;
}

// Asymmetric levels in [0, nmax], x ~ scale * l - the_min: the min/max fit,
// then nstep + 1 candidate scales, each with the weighted least-squares scale
// and min for its levels; keeps the lowest weighted squared error.
float weighted_qkx(int n, int nmax, const float* x, const float* w, uint8_t* L, float* the_min, uint8_t* Laux,
                   float rmin, float rdelta, int nstep) {
  float min = x[0], max = x[0];
  float sum_w = w[0], sum_x = w[0] * x[0];
  for (int i = 1; i < n; ++i) {
    min = std::min(min, x[i]);
    max = std::max(max, x[i]);
    sum_w += w[i];
    sum_x += w[i] * x[i];
  }
  if (min > 0) min = 0;
  if (max <= min) {
    std::memset(L, 0, static_cast<size_t>(n));
    *the_min = -min;
    return 0.f;
  }
  float iscale = static_cast<float>(nmax) / (max - min);
  float scale = 1 / iscale;
  float best = 0;
  for (int i = 0; i < n; ++i) {
    L[i] = static_cast<uint8_t>(std::clamp(nearest_int(iscale * (x[i] - min)), 0, nmax));
    const float diff = scale * static_cast<float>(L[i]) + min - x[i];
    best += w[i] * diff * diff;
  }
  for (int is = 0; is <= nstep; ++is) {
    iscale = (rmin + rdelta * static_cast<float>(is) + static_cast<float>(nmax)) / (max - min);
    float sum_l = 0, sum_l2 = 0, sum_xl = 0;
    for (int i = 0; i < n; ++i) {
      const int l = std::clamp(nearest_int(iscale * (x[i] - min)), 0, nmax);
      Laux[i] = static_cast<uint8_t>(l);
      const auto fl = static_cast<float>(l);
      sum_l += w[i] * fl;
      sum_l2 += w[i] * fl * fl;
      sum_xl += w[i] * fl * x[i];
    }
    const float D = sum_w * sum_l2 - sum_l * sum_l;
    if (!(D > 0)) continue;
    float this_scale = (sum_w * sum_xl - sum_x * sum_l) / D;
    float this_min = (sum_l2 * sum_x - sum_l * sum_xl) / D;
    if (this_min > 0) {
      this_min = 0;
      this_scale = sum_xl / sum_l2;
    }
    float err = 0;
    for (int i = 0; i < n; ++i) {
      const float diff = this_scale * static_cast<float>(Laux[i]) + this_min - x[i];
      err += w[i] * diff * diff;
    }
    if (err < best) {
      std::memcpy(L, Laux, static_cast<size_t>(n));
      best = err;
      scale = this_scale;
      min = this_min;
    }
  }
  *the_min = -min;
  return scale;
}

// Non-negative levels in [0, nmax] for the sub-block scales (or mins) of a
// super-block, weighted by each sub-block's total weight: 9 candidate scales,
// then coordinate descent on single levels.
float weighted_qp(int n, int nmax, const float* x, uint8_t* L, const float* w) {
  float max = 0;
  for (int i = 0; i < n; ++i) max = std::max(max, x[i]);
  if (max < kGroupMaxEps) {
    std::memset(L, 0, static_cast<size_t>(n));
    return 0.f;
  }
  const auto err_for = [&](float is) {
    const float s = 1 / is;
    float e = 0;
    for (int i = 0; i < n; ++i) {
      const float diff = x[i] - s * static_cast<float>(std::min(nmax, nearest_int(is * x[i])));
      e += w[i] * diff * diff;
    }
    return e;
  };
  float iscale = static_cast<float>(nmax) / max;
  // The first candidate is scored without the upper clamp, as published.
  float best = 0;
  {
    const float s = 1 / iscale;
    for (int i = 0; i < n; ++i) {
      const float diff = x[i] - s * static_cast<float>(nearest_int(iscale * x[i]));
      best += w[i] * diff * diff;
    }
  }
  for (int is = -4; is <= 4; ++is) {
    if (is == 0) continue;
    const float candidate = (0.1f * static_cast<float>(is) + static_cast<float>(nmax)) / max;
    const float e = err_for(candidate);
    if (e < best) {
      best = e;
      iscale = candidate;
    }
  }
  float sumlx = 0, suml2 = 0;
  for (int i = 0; i < n; ++i) {
    const int l = std::min(nmax, nearest_int(iscale * x[i]));
    L[i] = static_cast<uint8_t>(l);
    sumlx += w[i] * x[i] * static_cast<float>(l);
    suml2 += w[i] * static_cast<float>(l * l);
  }
  for (int pass = 0; pass < 5; ++pass) {
    int changed = 0;
    for (int i = 0; i < n; ++i) {
      const float li = L[i];
      float slx = sumlx - w[i] * x[i] * li;
      float sl2 = suml2 - w[i] * li * li;
      if (!(slx > 0 && sl2 > 0)) continue;
      const int new_l = std::min(nmax, nearest_int(x[i] * sl2 / slx));
      if (new_l == L[i]) continue;
      slx += w[i] * x[i] * static_cast<float>(new_l);
      sl2 += w[i] * static_cast<float>(new_l * new_l);
      if (slx * slx * suml2 > sumlx * sumlx * sl2) {
        L[i] = static_cast<uint8_t>(new_l);
        sumlx = slx;
        suml2 = sl2;
        ++changed;
      }
    }
    if (changed == 0) break;
  }
  return suml2 > 0.0f ? sumlx / suml2 : 0.0f;
}

// Weights of `n` values: importance times sqrt(sigma2 + x^2).
void value_weights(const float* x, const float* importance, float sigma2, int n, float* w) {
  for (int j = 0; j < n; ++j) w[j] = importance[j] * std::sqrt(sigma2 + x[j] * x[j]);
}

float mean_square(const float* x, int64_t n) {
  float s = 0;
  for (int64_t j = 0; j < n; ++j) s += x[j] * x[j];
  return s / static_cast<float>(n);
}

void pack_2bit(const uint8_t* L, uint8_t* qs) {
  for (int j = 0; j < kQK_K; j += 128) {
    for (int l = 0; l < 32; ++l) {
      qs[j / 4 + l] = static_cast<uint8_t>(L[j + l] | (L[j + l + 32] << 2) | (L[j + l + 64] << 4) | (L[j + l + 96] << 6));
    }
  }
}

void q2_k(const float* x, void* dst, int64_t n, const float* qw) {
  auto* b = static_cast<BlockQ2_K*>(dst);
  uint8_t L[kQK_K], Laux[16], Ls[kQK_K / 16], Lm[kQK_K / 16];
  float mins[kQK_K / 16], scales[kQK_K / 16], sw[kQK_K / 16], w[16];
  for (int64_t i = 0; i < n / kQK_K; ++i, x += kQK_K, qw += kQK_K) {
    const float sigma2 = mean_square(x, kQK_K);
    for (int j = 0; j < kQK_K / 16; ++j) {
      value_weights(x + 16 * j, qw + 16 * j, sigma2, 16, w);
      sw[j] = 0;
      for (int l = 0; l < 16; ++l) sw[j] += w[l];
      scales[j] = weighted_qkx(16, 3, x + 16 * j, w, L + 16 * j, &mins[j], Laux, -0.9f, 0.05f, 36);
    }
    b[i].d = fp32_to_fp16(weighted_qp(kQK_K / 16, 15, scales, Ls, sw));
    b[i].dmin = fp32_to_fp16(weighted_qp(kQK_K / 16, 15, mins, Lm, sw));
    const float dm = fp16_to_fp32(b[i].d), mm = fp16_to_fp32(b[i].dmin);
    for (int j = 0; j < kQK_K / 16; ++j) {
      b[i].scales[j] = static_cast<uint8_t>(Ls[j] | (Lm[j] << 4));
      const float d = dm * static_cast<float>(Ls[j]);
      if (d == 0) continue;
      const float m = mm * static_cast<float>(Lm[j]);
      for (int ii = 0; ii < 16; ++ii) {
        L[16 * j + ii] = static_cast<uint8_t>(std::clamp(nearest_int((x[16 * j + ii] + m) / d), 0, 3));
      }
    }
    pack_2bit(L, b[i].qs);
  }
}

void q3_k(const float* x, void* dst, int64_t n, const float* qw) {
  auto* b = static_cast<BlockQ3_K*>(dst);
  int8_t L[kQK_K], Ls[kQK_K / 16];
  float scales[kQK_K / 16], sw[kQK_K / 16], w[16];
  for (int64_t i = 0; i < n / kQK_K; ++i, x += kQK_K, qw += kQK_K) {
    const float sigma2 = 2 * mean_square(x, kQK_K);
    for (int j = 0; j < kQK_K / 16; ++j) {
      value_weights(x + 16 * j, qw + 16 * j, sigma2, 16, w);
      sw[j] = 0;
      for (int l = 0; l < 16; ++l) sw[j] += w[l];
      scales[j] = weighted_qx(16, 4, x + 16 * j, L + 16 * j, w);
    }
    std::memset(b[i].scales, 0, sizeof(b[i].scales));
    b[i].d = fp32_to_fp16(weighted_qx(kQK_K / 16, 32, scales, Ls, sw));
    for (int j = 0; j < kQK_K / 16; ++j) {
      int l = Ls[j];  // 0..63, the six-bit scale offset by 32
      if (j < 8) {
        b[i].scales[j] = static_cast<uint8_t>(l & 0xF);
      } else {
        b[i].scales[j - 8] = static_cast<uint8_t>(b[i].scales[j - 8] | ((l & 0xF) << 4));
      }
      l >>= 4;
      b[i].scales[j % 4 + 8] = static_cast<uint8_t>(b[i].scales[j % 4 + 8] | (l << (2 * (j / 4))));
    }
    for (int j = 0; j < kQK_K / 16; ++j) {
      const float d = fp16_to_fp32(b[i].d) * static_cast<float>(q3k_scale(b[i].scales, j));
      if (d == 0) continue;
      for (int ii = 0; ii < 16; ++ii) {
        L[16 * j + ii] = static_cast<int8_t>(std::clamp(nearest_int(x[16 * j + ii] / d), -4, 3) + 4);
      }
    }
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

// Q4_K and Q5_K share the sub-block search: eight 32-value sub-blocks, six-bit
// scales and mins fitted against the sub-blocks' weights.
void k_subblocks(const float* x, const float* qw, int nmax, uint16_t* d_out, uint16_t* dmin_out, uint8_t* packed,
                 uint8_t* L) {
  uint8_t Laux[32], Ls[kQK_K / 32], Lm[kQK_K / 32];
  float w[32], sw[kQK_K / 32], mins[kQK_K / 32], scales[kQK_K / 32];
  const float sigma2 = 2 * mean_square(x, kQK_K);
  for (int j = 0; j < kQK_K / 32; ++j) {
    value_weights(x + 32 * j, qw + 32 * j, sigma2, 32, w);
    sw[j] = 0;
    for (int l = 0; l < 32; ++l) sw[j] += w[l];
    scales[j] = weighted_qkx(32, nmax, x + 32 * j, w, L + 32 * j, &mins[j], Laux, -0.9f, 0.05f, 36);
  }
  const float d_block = weighted_qp(kQK_K / 32, 63, scales, Ls, sw);
  const float m_block = weighted_qp(kQK_K / 32, 63, mins, Lm, sw);
  std::memset(packed, 0, 12);
  for (int j = 0; j < kQK_K / 32; ++j) {
    const int ls = std::min<int>(63, Ls[j]), lm = std::min<int>(63, Lm[j]);
    if (j < 4) {
      packed[j] = static_cast<uint8_t>(ls);
      packed[j + 4] = static_cast<uint8_t>(lm);
    } else {
      packed[j + 4] = static_cast<uint8_t>((ls & 0xF) | ((lm & 0xF) << 4));
      packed[j - 4] = static_cast<uint8_t>(packed[j - 4] | ((ls >> 4) << 6));
      packed[j] = static_cast<uint8_t>(packed[j] | ((lm >> 4) << 6));
    }
  }
  *d_out = fp32_to_fp16(d_block);
  *dmin_out = fp32_to_fp16(m_block);
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

void q4_k(const float* x, void* dst, int64_t n, const float* qw) {
  auto* b = static_cast<BlockQ4_K*>(dst);
  uint8_t L[kQK_K];
  for (int64_t i = 0; i < n / kQK_K; ++i, x += kQK_K, qw += kQK_K) {
    k_subblocks(x, qw, 15, &b[i].d, &b[i].dmin, b[i].scales, L);
    uint8_t* q = b[i].qs;
    for (int j = 0; j < kQK_K; j += 64, q += 32) {
      for (int l = 0; l < 32; ++l) q[l] = static_cast<uint8_t>(L[j + l] | (L[j + l + 32] << 4));
    }
  }
}

void q5_k(const float* x, void* dst, int64_t n, const float* qw) {
  auto* b = static_cast<BlockQ5_K*>(dst);
  uint8_t L[kQK_K];
  for (int64_t i = 0; i < n / kQK_K; ++i, x += kQK_K, qw += kQK_K) {
    k_subblocks(x, qw, 31, &b[i].d, &b[i].dmin, b[i].scales, L);
    std::memset(b[i].qh, 0, sizeof(b[i].qh));
    uint8_t* ql = b[i].qs;
    int m1 = 1, m2 = 2;
    for (int j = 0; j < kQK_K; j += 64, ql += 32, m1 <<= 2, m2 <<= 2) {
      for (int l = 0; l < 32; ++l) {
        int l1 = L[j + l], l2 = L[j + l + 32];
        if (l1 > 15) {
          l1 -= 16;
          b[i].qh[l] = static_cast<uint8_t>(b[i].qh[l] | m1);
        }
        if (l2 > 15) {
          l2 -= 16;
          b[i].qh[l] = static_cast<uint8_t>(b[i].qh[l] | m2);
        }
        ql[l] = static_cast<uint8_t>(l1 | (l2 << 4));
      }
    }
  }
}

// Q6_K weighs the sub-block searches by the importance alone (no sigma term),
// as the reference does.
void q6_k(const float* x, void* dst, int64_t n, const float* qw) {
  auto* b = static_cast<BlockQ6_K*>(dst);
  int8_t L[kQK_K];
  float scales[kQK_K / 16];
  for (int64_t i = 0; i < n / kQK_K; ++i, x += kQK_K, qw += kQK_K) {
    float max_scale = 0, max_abs_scale = 0;
    for (int ib = 0; ib < kQK_K / 16; ++ib) {
      scales[ib] = weighted_qx(16, 32, x + 16 * ib, L + 16 * ib, qw + 16 * ib);
      if (std::fabs(scales[ib]) > max_abs_scale) {
        max_abs_scale = std::fabs(scales[ib]);
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
        ql[l] = static_cast<uint8_t>((L[j + l] & 0xF) | ((L[j + l + 64] & 0xF) << 4));
        ql[l + 32] = static_cast<uint8_t>((L[j + l + 32] & 0xF) | ((L[j + l + 96] & 0xF) << 4));
        qh[l] = static_cast<uint8_t>((L[j + l] >> 4) | ((L[j + l + 32] >> 4) << 2) | ((L[j + l + 64] >> 4) << 4) |
                                     ((L[j + l + 96] >> 4) << 6));
      }
    }
  }
}

// The 32-value formats take sigma2 from the whole row.
template <typename Block, bool kHasMin, int kNmax>
void legacy(const float* x, void* dst, int64_t n, const float* qw) {
  auto* b = static_cast<Block*>(dst);
  const float sigma2 = mean_square(x, n);
  float w[kQK];
  for (int64_t ib = 0; ib < n / kQK; ++ib) {
    const float* xb = x + kQK * ib;
    value_weights(xb, qw + kQK * ib, sigma2, kQK, w);
    uint8_t L[kQK];
    if constexpr (kHasMin) {
      uint8_t Laux[kQK];
      float min = 0;
      b[ib].d = fp32_to_fp16(weighted_qkx(kQK, kNmax, xb, w, L, &min, Laux, -0.9f, 0.05f, 36));
      b[ib].m = fp32_to_fp16(-min);
    } else {
      int8_t Ls[kQK];
      b[ib].d = fp32_to_fp16(weighted_qx(kQK, (kNmax + 1) / 2, xb, Ls, w));
      for (int j = 0; j < kQK; ++j) L[j] = static_cast<uint8_t>(Ls[j]);
    }
    uint32_t qh = 0;
    for (int j = 0; j < kQK / 2; ++j) {
      b[ib].qs[j] = static_cast<uint8_t>((L[j] & 0x0F) | ((L[j + kQK / 2] & 0x0F) << 4));
      qh |= static_cast<uint32_t>((L[j] & 0x10u) >> 4) << j;
      qh |= static_cast<uint32_t>((L[j + kQK / 2] & 0x10u) >> 4) << (j + kQK / 2);
    }
    if constexpr (requires { b[ib].qh; }) std::memcpy(b[ib].qh, &qh, sizeof(qh));
  }
}

void iq4_nl(const float* x, void* dst, int64_t n, const float* qw) {
  auto* b = static_cast<BlockIQ4_NL*>(dst);
  for (int64_t i = 0; i < n / kQK; ++i) {
    quantize_iq4_superblock(kQK, x + kQK * i, &b[i].d, b[i].qs, nullptr, nullptr, qw + kQK * i);
  }
}

void iq4_xs(const float* x, void* dst, int64_t n, const float* qw) {
  auto* b = static_cast<BlockIQ4_XS*>(dst);
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    quantize_iq4_superblock(kQK_K, x + kQK_K * i, &b[i].d, b[i].qs, &b[i].scales_h, b[i].scales_l, qw + kQK_K * i);
  }
}

using WeightedFn = void (*)(const float*, void*, int64_t, const float*);

WeightedFn weighted_quantizer(DType type) {
  switch (type) {
    case DType::Q2_K: return q2_k;
    case DType::Q3_K: return q3_k;
    case DType::Q4_K: return q4_k;
    case DType::Q5_K: return q5_k;
    case DType::Q6_K: return q6_k;
    case DType::Q4_0: return legacy<BlockQ4_0, false, 15>;
    case DType::Q4_1: return legacy<BlockQ4_1, true, 15>;
    case DType::Q5_0: return legacy<BlockQ5_0, false, 31>;
    case DType::Q5_1: return legacy<BlockQ5_1, true, 31>;
    case DType::IQ4_NL: return iq4_nl;
    case DType::IQ4_XS: return iq4_xs;
    default: return nullptr;
  }
}

}  // namespace
}  // namespace detail

bool takes_importance(DType type) { return detail::weighted_quantizer(type) != nullptr; }

Status quantize_row_weighted(DType type, const float* src, void* dst, int64_t n, const float* importance) {
  const auto fn = detail::weighted_quantizer(type);
  if (!fn) return quantize_row(type, src, dst, n);
  const int64_t block = traits(type).block_elements;
  if (n <= 0 || n % block != 0) {
    return make_error(ErrorCode::InvalidArgument,
                      fmt::format("a {} row needs a multiple of {} values, got {}", traits(type).name, block, n));
  }
  if (!importance) return quantize_row(type, src, dst, n);
  fn(src, dst, n, importance);
  return {};
}

}  // namespace hearth::quant
