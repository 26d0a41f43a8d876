// Scale searches used by the K-quant and IQ4 quantizers. Each tries a few
// candidate scales around the naive max-based one and keeps the one with the
// lowest weighted error, solving the least-squares scale (and min) for the
// integer levels each candidate produced. These follow the published
// algorithms of the reference engine so the error matches its files.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "hearth/engine/quant/fp16.h"
#include "ref_internal.h"

namespace hearth::quant::detail {

int best_index_int8(int n, const int8_t* val, float x) {
  if (x <= val[0]) return 0;
  if (x >= val[n - 1]) return n - 1;
  int ml = 0, mu = n - 1;
  while (mu - ml > 1) {
    const int mav = (ml + mu) / 2;
    if (x < val[mav]) {
      mu = mav;
    } else {
      ml = mav;
    }
  }
  return x - val[mu - 1] < val[mu] - x ? mu - 1 : mu;
}

// Symmetric levels in [-nmax, nmax - 1], written to L offset by nmax.
// rmse_type 1 weights errors by x^2 (favouring large values), 2 uniformly,
// 3 by |x|, others by sqrt|x|; a negative type returns after the first fit.
float make_qx_quants(int n, int nmax, const float* x, int8_t* L, int rmse_type) {
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
  float iscale = -static_cast<float>(nmax) / max;
  const auto level = [&](float s, int i) { return std::clamp(nearest_int(s * x[i]), -nmax, nmax - 1); };
  if (rmse_type == 0) {
    for (int i = 0; i < n; ++i) L[i] = static_cast<int8_t>(nmax + level(iscale, i));
    return 1 / iscale;
  }
  bool return_early = false;
  if (rmse_type < 0) {
    rmse_type = -rmse_type;
    return_early = true;
  }
  const auto weight = [&](int i) {
    switch (rmse_type) {
      case 1: return x[i] * x[i];
      case 2: return 1.0f;
      case 3: return std::fabs(x[i]);
      default: return std::sqrt(std::fabs(x[i]));
    }
  };
  float sumlx = 0, suml2 = 0;
  for (int i = 0; i < n; ++i) {
    const int l = level(iscale, i);
    L[i] = static_cast<int8_t>(l + nmax);
    const float w = weight(i);
    sumlx += w * x[i] * static_cast<float>(l);
    suml2 += w * static_cast<float>(l * l);
  }
  float scale = suml2 != 0 ? sumlx / suml2 : 0.0f;
  if (return_early) return suml2 > 0 ? 0.5f * (scale + 1 / iscale) : 1 / iscale;
  float best = scale * sumlx;
  for (int is = -9; is <= 9; ++is) {
    if (is == 0) continue;
    iscale = -(static_cast<float>(nmax) + 0.1f * static_cast<float>(is)) / max;
    sumlx = suml2 = 0;
    for (int i = 0; i < n; ++i) {
      const int l = level(iscale, i);
      const float w = weight(i);
      sumlx += w * x[i] * static_cast<float>(l);
      suml2 += w * static_cast<float>(l * l);
    }
    if (suml2 > 0 && sumlx * sumlx > best * suml2) {
      for (int i = 0; i < n; ++i) L[i] = static_cast<int8_t>(nmax + level(iscale, i));
      scale = sumlx / suml2;
      best = scale * sumlx;
    }
  }
  return scale;
}

// Levels in [-nmax, nmax - 1] (offset by nmax in L); with do_rmse, a few
// passes of coordinate descent move single levels while that lowers the
// x^2-weighted error.
float make_q3_quants(int n, int nmax, const float* x, int8_t* L, bool do_rmse) {
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
  const float iscale = -static_cast<float>(nmax) / max;
  if (do_rmse) {
    float sumlx = 0, suml2 = 0;
    for (int i = 0; i < n; ++i) {
      const int l = std::clamp(nearest_int(iscale * x[i]), -nmax, nmax - 1);
      L[i] = static_cast<int8_t>(l);
      const float w = x[i] * x[i];
      sumlx += w * x[i] * static_cast<float>(l);
      suml2 += w * static_cast<float>(l * l);
    }
    for (int itry = 0; itry < 5; ++itry) {
      int n_changed = 0;
      for (int i = 0; i < n; ++i) {
        const float w = x[i] * x[i];
        float slx = sumlx - w * x[i] * static_cast<float>(L[i]);
        if (slx > 0) {
          float sl2 = suml2 - w * static_cast<float>(L[i] * L[i]);
          const int new_l = std::clamp(nearest_int(x[i] * sl2 / slx), -nmax, nmax - 1);
          if (new_l != L[i]) {
            slx += w * x[i] * static_cast<float>(new_l);
            sl2 += w * static_cast<float>(new_l * new_l);
            if (sl2 > 0 && slx * slx * suml2 > sumlx * sumlx * sl2) {
              L[i] = static_cast<int8_t>(new_l);
              sumlx = slx;
              suml2 = sl2;
              ++n_changed;
            }
          }
        }
      }
      if (n_changed == 0) break;
    }
    for (int i = 0; i < n; ++i) L[i] = static_cast<int8_t>(L[i] + nmax);
    return sumlx / suml2;
  }
  for (int i = 0; i < n; ++i) {
    L[i] = static_cast<int8_t>(nmax + std::clamp(nearest_int(iscale * x[i]), -nmax, nmax - 1));
  }
  return 1 / iscale;
}

// Asymmetric levels in [0, nmax] with x ~ scale * L - the_min. Starts from
// the min/max fit, then tries nstep+1 scales (rmin + rdelta * is + nmax)/(max
// - min) and for each solves the weighted least-squares scale and min.
float make_qkx2_quants(int n, int nmax, const float* x, const float* weights, uint8_t* L,
                       float* the_min, uint8_t* Laux, float rmin, float rdelta, int nstep,
                       bool use_mad) {
  float min = x[0], max = x[0];
  float sum_w = weights[0];
  float sum_x = sum_w * x[0];
  for (int i = 1; i < n; ++i) {
    min = std::min(min, x[i]);
    max = std::max(max, x[i]);
    sum_w += weights[i];
    sum_x += weights[i] * x[i];
  }
  if (min > 0) min = 0;
  if (max == min) {
    std::memset(L, 0, static_cast<size_t>(n));
    *the_min = -min;
    return 0.f;
  }
  const auto err = [&](float diff) { return use_mad ? std::fabs(diff) : diff * diff; };
  float iscale = static_cast<float>(nmax) / (max - min);
  float scale = 1 / iscale;
  float best_mad = 0;
  for (int i = 0; i < n; ++i) {
    const int l = std::clamp(nearest_int(iscale * (x[i] - min)), 0, nmax);
    L[i] = static_cast<uint8_t>(l);
    best_mad += weights[i] * err(scale * static_cast<float>(l) + min - x[i]);
  }
  if (nstep < 1) {
    *the_min = -min;
    return scale;
  }
  for (int is = 0; is <= nstep; ++is) {
    iscale = (rmin + rdelta * static_cast<float>(is) + static_cast<float>(nmax)) / (max - min);
    float sum_l = 0, sum_l2 = 0, sum_xl = 0;
    for (int i = 0; i < n; ++i) {
      const int l = std::clamp(nearest_int(iscale * (x[i] - min)), 0, nmax);
      Laux[i] = static_cast<uint8_t>(l);
      const float w = weights[i];
      const auto fl = static_cast<float>(l);
      sum_l += w * fl;
      sum_l2 += w * fl * fl;
      sum_xl += w * fl * x[i];
    }
    const float D = sum_w * sum_l2 - sum_l * sum_l;
    if (D > 0) {
      float this_scale = (sum_w * sum_xl - sum_x * sum_l) / D;
      float this_min = (sum_l2 * sum_x - sum_l * sum_xl) / D;
      if (this_min > 0) {
        this_min = 0;
        this_scale = sum_xl / sum_l2;
      }
      float mad = 0;
      for (int i = 0; i < n; ++i) {
        mad += weights[i] * err(this_scale * static_cast<float>(Laux[i]) + this_min - x[i]);
      }
      if (mad < best_mad) {
        std::memcpy(L, Laux, static_cast<size_t>(n));
        best_mad = mad;
        scale = this_scale;
        min = this_min;
      }
    }
  }
  *the_min = -min;
  return scale;
}

// IQ4: for each 32-value block, try 2 * kTries + 1 scales mapping the
// largest value near the codebook's ends, fit the x^2-weighted least-squares
// scale for the chosen codes, keep the best. With several blocks (IQ4_XS)
// the block scales are then quantized to six bits against one super-scale
// and the codes recomputed for the rounded scales.
void quantize_iq4_superblock(int super_block_size, const float* x, uint16_t* dh, uint8_t* q4,
                             uint16_t* scales_h, uint8_t* scales_l, const float* importance) {
  constexpr int kBlock = 32;
  constexpr int kTries = 7;
  const int8_t* values = kIq4Values;
  float scales[kQK_K / kBlock];
  float weight[kBlock];
  uint8_t L[kQK_K];
  const int nblocks = super_block_size / kBlock;

  // With importance weights, the error of value j counts importance[j] *
  // sqrt(sigma2 + x_j^2) (sigma2: twice the mean square of the super-block),
  // the reference's weighting; without, x_j^2.
  float sigma2 = 0;
  if (importance) {
    for (int j = 0; j < super_block_size; ++j) sigma2 += x[j] * x[j];
    sigma2 *= 2.f / static_cast<float>(super_block_size);
  }
  std::memset(q4, 0, static_cast<size_t>(super_block_size / 2));
  *dh = fp32_to_fp16(0.f);
  float max_scale = 0, amax_scale = 0;
  for (int ib = 0; ib < nblocks; ++ib) {
    const float* xb = x + ib * kBlock;
    uint8_t* Lb = L + ib * kBlock;
    float amax = 0, max = 0;
    for (int j = 0; j < kBlock; ++j) {
      weight[j] = importance ? importance[ib * kBlock + j] * std::sqrt(sigma2 + xb[j] * xb[j]) : xb[j] * xb[j];
      const float ax = std::fabs(xb[j]);
      if (ax > amax) {
        amax = ax;
        max = xb[j];
      }
    }
    if (amax < kGroupMaxEps) {
      scales[ib] = 0;
      std::memset(Lb, 0, kBlock);
      continue;
    }
    float d = -max / values[0];
    float id = 1 / d;
    float sumqx = 0, sumq2 = 0;
    for (int j = 0; j < kBlock; ++j) {
      const int l = best_index_int8(16, values, id * xb[j]);
      Lb[j] = static_cast<uint8_t>(l);
      const auto q = static_cast<float>(values[l]);
      sumqx += weight[j] * q * xb[j];
      sumq2 += weight[j] * q * q;
    }
    // Importance weights may all be zero (columns no token used).
    d = importance && !(sumq2 > 0) ? 0.f : sumqx / sumq2;
    float best = d * sumqx;
    for (int itry = -kTries; itry <= kTries; ++itry) {
      id = (static_cast<float>(itry) + values[0]) / max;
      sumqx = sumq2 = 0;
      for (int j = 0; j < kBlock; ++j) {
        const int l = best_index_int8(16, values, id * xb[j]);
        const auto q = static_cast<float>(values[l]);
        sumqx += weight[j] * q * xb[j];
        sumq2 += weight[j] * q * q;
      }
      if (sumq2 > 0 && sumqx * sumqx > best * sumq2) {
        d = sumqx / sumq2;
        best = d * sumqx;
      }
    }
    scales[ib] = d;
    const float abs_d = std::fabs(d);
    if (abs_d > amax_scale) {
      amax_scale = abs_d;
      max_scale = d;
    }
  }

  if (nblocks > 1) {
    *scales_h = 0;
    std::memset(scales_l, 0, static_cast<size_t>(nblocks / 2));
    const float d = -max_scale / 32;
    *dh = fp32_to_fp16(d);
    const float id = d != 0 ? 1 / d : 0.f;
    for (int ib = 0; ib < nblocks; ++ib) {
      int l = std::clamp(nearest_int(id * scales[ib]), -32, 31);
      const float dl = d * static_cast<float>(l);
      const float idl = dl != 0 ? 1 / dl : 0.f;
      for (int j = 0; j < kBlock; ++j) {
        L[ib * kBlock + j] = static_cast<uint8_t>(best_index_int8(16, values, idl * x[ib * kBlock + j]));
      }
      l += 32;
      const int l_l = l & 0xf;
      const int l_h = l >> 4;
      if (ib % 2 == 0) {
        scales_l[ib / 2] = static_cast<uint8_t>(l_l);
      } else {
        scales_l[ib / 2] = static_cast<uint8_t>(scales_l[ib / 2] | (l_l << 4));
      }
      *scales_h = static_cast<uint16_t>(*scales_h | (l_h << (2 * ib)));
    }
  } else {
    *dh = fp32_to_fp16(scales[0]);
    const float id = scales[0] != 0 ? 1 / scales[0] : 0.f;
    for (int j = 0; j < super_block_size; ++j) {
      L[j] = static_cast<uint8_t>(best_index_int8(16, values, id * x[j]));
    }
  }
  for (int i = 0; i < super_block_size / 32; ++i) {
    for (int j = 0; j < 16; ++j) {
      q4[16 * i + j] = static_cast<uint8_t>(L[32 * i + j] | (L[32 * i + 16 + j] << 4));
    }
  }
}

}  // namespace hearth::quant::detail
