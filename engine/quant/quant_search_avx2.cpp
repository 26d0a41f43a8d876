// make_qkx2_quants with its candidate scales evaluated 8 per AVX2 register.
// The scalar search tries nstep + 1 scales one after the other, each a pass
// over the values; here each lane is one candidate and walks the values in
// the same order with the same float operations (separate multiply and add,
// no FMA: this file is built without -mfma and with -ffp-contract=off), so
// every lane's sums equal the scalar ones bit for bit and the chosen scale,
// min and levels are identical. Keeps the K-quant quantizer fast enough for
// whole models (issue target: >= 100 MB/s of F16 input on 2 cores).
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "hearth/engine/quant/reference.h"
#include "kernels_internal.h"
#include "ref_internal.h"

namespace hearth::quant::detail {
namespace {

constexpr int kMaxCandidates = 32;

inline __m256i nearest_int8x(__m256 f) {
  const __m256i i = _mm256_castps_si256(_mm256_add_ps(f, _mm256_set1_ps(12582912.f)));
  return _mm256_sub_epi32(_mm256_and_si256(i, _mm256_set1_epi32(0x007fffff)), _mm256_set1_epi32(0x00400000));
}

inline __m256 level8x(__m256 iscale, __m256 xm, __m256i nmax) {
  const __m256i l = nearest_int8x(_mm256_mul_ps(iscale, xm));
  return _mm256_cvtepi32_ps(_mm256_min_epi32(_mm256_max_epi32(l, _mm256_setzero_si256()), nmax));
}

}  // namespace

float make_qkx2_quants_avx2(int n, int nmax, const float* x, const float* weights, uint8_t* L,
                            float* the_min, uint8_t* Laux, float rmin, float rdelta, int nstep,
                            bool use_mad) {
  const int ncand = nstep + 1;
  if (nstep < 1 || ncand > kMaxCandidates) {
    return make_qkx2_quants(n, nmax, x, weights, L, the_min, Laux, rmin, rdelta, nstep, use_mad);
  }
  // Prologue exactly as the scalar search.
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
  float iscale0 = static_cast<float>(nmax) / (max - min);
  float scale = 1 / iscale0;
  float best_mad = 0;
  for (int i = 0; i < n; ++i) {
    const int l = std::clamp(nearest_int(iscale0 * (x[i] - min)), 0, nmax);
    L[i] = static_cast<uint8_t>(l);
    best_mad += weights[i] * err(scale * static_cast<float>(l) + min - x[i]);
  }

  // The scalar loop updates `min` whenever a candidate wins, and later
  // candidates use the new min. So: evaluate the next 8 candidates with the
  // current min, accept the first one that improves, and continue after it
  // with the updated min (or after the 8 when none improves).
  const __m256i vmax = _mm256_set1_epi32(nmax);
  const __m256 sign_mask = _mm256_set1_ps(-0.0f);
  int best = -1;
  float best_iscale = 0, best_eval_min = 0;
  for (int first = 0; first < ncand;) {
    const int count = std::min(8, ncand - first);
    const int nvec = 1;
    alignas(32) float iscale[kMaxCandidates];
    for (int k = 0; k < kMaxCandidates; ++k) {
      const int is = first + std::min(k, count - 1);  // spare lanes repeat the last candidate
      iscale[k] = (rmin + rdelta * static_cast<float>(is) + static_cast<float>(nmax)) / (max - min);
    }
    // Pass 1: weighted sums of l, l^2 and l x for every candidate.
    alignas(32) float s_l[kMaxCandidates], s_l2[kMaxCandidates], s_xl[kMaxCandidates];
    for (int v = 0; v < nvec; ++v) {
      const __m256 is_v = _mm256_load_ps(iscale + 8 * v);
      __m256 sl = _mm256_setzero_ps(), sl2 = _mm256_setzero_ps(), sxl = _mm256_setzero_ps();
      for (int i = 0; i < n; ++i) {
        const __m256 fl = level8x(is_v, _mm256_set1_ps(x[i] - min), vmax);
        const __m256 wl = _mm256_mul_ps(_mm256_set1_ps(weights[i]), fl);
        sl = _mm256_add_ps(sl, wl);
        sl2 = _mm256_add_ps(sl2, _mm256_mul_ps(wl, fl));
        sxl = _mm256_add_ps(sxl, _mm256_mul_ps(wl, _mm256_set1_ps(x[i])));
      }
      _mm256_store_ps(s_l + 8 * v, sl);
      _mm256_store_ps(s_l2 + 8 * v, sl2);
      _mm256_store_ps(s_xl + 8 * v, sxl);
    }
    // Least-squares scale and min per candidate, as the scalar code computes them.
    alignas(32) float t_scale[kMaxCandidates] = {}, t_min[kMaxCandidates] = {};
    bool valid[kMaxCandidates] = {};
    for (int k = 0; k < count; ++k) {
      const float D = sum_w * s_l2[k] - s_l[k] * s_l[k];
      if (D > 0) {
        float this_scale = (sum_w * s_xl[k] - sum_x * s_l[k]) / D;
        float this_min = (s_l2[k] * sum_x - s_l[k] * s_xl[k]) / D;
        if (this_min > 0) {
          this_min = 0;
          this_scale = s_xl[k] / s_l2[k];
        }
        t_scale[k] = this_scale;
        t_min[k] = this_min;
        valid[k] = true;
      }
    }
    // Pass 2: weighted error of every candidate's fit.
    alignas(32) float mad[kMaxCandidates];
    for (int v = 0; v < nvec; ++v) {
      const __m256 is_v = _mm256_load_ps(iscale + 8 * v);
      const __m256 ts = _mm256_load_ps(t_scale + 8 * v);
      const __m256 tm = _mm256_load_ps(t_min + 8 * v);
      __m256 acc = _mm256_setzero_ps();
      for (int i = 0; i < n; ++i) {
        const __m256 xi = _mm256_set1_ps(x[i]);
        const __m256 fl = level8x(is_v, _mm256_set1_ps(x[i] - min), vmax);
        const __m256 diff = _mm256_sub_ps(_mm256_add_ps(_mm256_mul_ps(ts, fl), tm), xi);
        const __m256 e = use_mad ? _mm256_andnot_ps(sign_mask, diff) : _mm256_mul_ps(diff, diff);
        acc = _mm256_add_ps(acc, _mm256_mul_ps(_mm256_set1_ps(weights[i]), e));
      }
      _mm256_store_ps(mad + 8 * v, acc);
    }
    int winner = -1;
    for (int k = 0; k < count && winner < 0; ++k) {
      if (valid[k] && mad[k] < best_mad) winner = k;
    }
    if (winner < 0) {
      first += count;
      continue;
    }
    best = first + winner;
    best_iscale = iscale[winner];
    best_eval_min = min;
    best_mad = mad[winner];
    scale = t_scale[winner];
    min = t_min[winner];
    first = best + 1;
  }
  if (best >= 0) {
    for (int i = 0; i < n; ++i) {
      L[i] = static_cast<uint8_t>(std::clamp(nearest_int(best_iscale * (x[i] - best_eval_min)), 0, nmax));
    }
  }
  (void)Laux;
  *the_min = -min;
  return scale;
}

// make_qx_quants for rmse_type 1 (x^2 weights, as Q6_K uses): the 18 extra
// candidate scales are independent of each other, so their sums are computed
// 8 lanes at a time in the scalar order; the choice then runs in order.
float make_qx_quants_avx2(int n, int nmax, const float* x, int8_t* L, int rmse_type) {
  if (rmse_type != 1 || n > 32) return make_qx_quants(n, nmax, x, L, rmse_type);
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
    const float w = x[i] * x[i];
    sumlx += w * x[i] * static_cast<float>(l);
    suml2 += w * static_cast<float>(l * l);
  }
  float scale = suml2 != 0 ? sumlx / suml2 : 0.0f;
  float best = scale * sumlx;
  // Candidates is = -9..-1, 1..9 in the scalar order.
  constexpr int kCand = 18;
  alignas(32) float cand_iscale[24];
  for (int k = 0; k < 24; ++k) {
    const int c = std::min(k, kCand - 1);
    const int is = c < 9 ? c - 9 : c - 8;
    cand_iscale[k] = -(static_cast<float>(nmax) + 0.1f * static_cast<float>(is)) / max;
  }
  alignas(32) float s_lx[24], s_l2[24];
  const __m256i lo = _mm256_set1_epi32(-nmax), hi = _mm256_set1_epi32(nmax - 1);
  for (int v = 0; v < 3; ++v) {
    const __m256 is_v = _mm256_load_ps(cand_iscale + 8 * v);
    __m256 slx = _mm256_setzero_ps(), sl2 = _mm256_setzero_ps();
    for (int i = 0; i < n; ++i) {
      const __m256 xi = _mm256_set1_ps(x[i]);
      const __m256i l = _mm256_min_epi32(_mm256_max_epi32(nearest_int8x(_mm256_mul_ps(is_v, xi)), lo), hi);
      const __m256 fl = _mm256_cvtepi32_ps(l);
      const __m256 w = _mm256_set1_ps(x[i] * x[i]);
      slx = _mm256_add_ps(slx, _mm256_mul_ps(_mm256_mul_ps(w, xi), fl));
      sl2 = _mm256_add_ps(sl2, _mm256_mul_ps(w, _mm256_cvtepi32_ps(_mm256_mullo_epi32(l, l))));
    }
    _mm256_store_ps(s_lx + 8 * v, slx);
    _mm256_store_ps(s_l2 + 8 * v, sl2);
  }
  int winner = -1;
  for (int k = 0; k < kCand; ++k) {
    if (s_l2[k] > 0 && s_lx[k] * s_lx[k] > best * s_l2[k]) {
      scale = s_lx[k] / s_l2[k];
      best = scale * s_lx[k];
      winner = k;
    }
  }
  if (winner >= 0) {
    for (int i = 0; i < n; ++i) L[i] = static_cast<int8_t>(nmax + level(cand_iscale[winner], i));
  }
  return scale;
}

namespace {

void quantize_q6_k_fast(const float* x, void* dst, int64_t n) { quantize_q6_k_with(x, dst, n, make_qx_quants_avx2); }

void quantize_q2_k_fast(const float* x, void* dst, int64_t n) { quantize_q2_k_with(x, dst, n, make_qkx2_quants_avx2); }
void quantize_q4_k_fast(const float* x, void* dst, int64_t n) { quantize_q4_k_with(x, dst, n, make_qkx2_quants_avx2); }
void quantize_q5_k_fast(const float* x, void* dst, int64_t n) { quantize_q5_k_with(x, dst, n, make_qkx2_quants_avx2); }

}  // namespace

void fill_quantizers_avx2(KernelTable& t) {
  t.by_type[static_cast<size_t>(DType::Q2_K)].quantize = quantize_q2_k_fast;
  t.by_type[static_cast<size_t>(DType::Q4_K)].quantize = quantize_q4_k_fast;
  t.by_type[static_cast<size_t>(DType::Q5_K)].quantize = quantize_q5_k_fast;
  t.by_type[static_cast<size_t>(DType::Q6_K)].quantize = quantize_q6_k_fast;
}

}  // namespace hearth::quant::detail
