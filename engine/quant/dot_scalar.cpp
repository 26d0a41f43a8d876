// Scalar row dot products: the oracle for every SIMD kernel. Each computes
// exact integer sums per (sub-)block, then scales them in float, which is
// what the SIMD kernels do too, so both agree to float rounding.
#include <cstring>

#include "hearth/engine/quant/blocks.h"
#include "hearth/engine/quant/fp16.h"
#include "hearth/engine/quant/reference.h"
#include "kernels_internal.h"
#include "ref_internal.h"

namespace hearth::quant::detail {
namespace {

float dot_f32(int64_t n, const void* w, const void* a) {
  const auto* x = static_cast<const float*>(w);
  const auto* y = static_cast<const float*>(a);
  double sum = 0;  // double: the oracle should not add its own rounding error
  for (int64_t i = 0; i < n; ++i) sum += static_cast<double>(x[i]) * y[i];
  return static_cast<float>(sum);
}

float dot_f16(int64_t n, const void* w, const void* a) {
  const auto* x = static_cast<const uint16_t*>(w);
  const auto* y = static_cast<const float*>(a);
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += static_cast<double>(fp16_to_fp32(x[i])) * y[i];
  return static_cast<float>(sum);
}

float dot_bf16(int64_t n, const void* w, const void* a) {
  const auto* x = static_cast<const uint16_t*>(w);
  const auto* y = static_cast<const float*>(a);
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += static_cast<double>(bf16_to_fp32(x[i])) * y[i];
  return static_cast<float>(sum);
}

// Sum of q[j] * a[j] over a 32-value block whose 4-bit codes are nibbles:
// value j in the low nibble of qs[j], value j + 16 in the high one.
template <typename Map>
int nibble_dot(const uint8_t* qs, const int8_t* a, Map map) {
  int sum = 0;
  for (int j = 0; j < 16; ++j) {
    sum += map(qs[j] & 0xF) * a[j];
    sum += map(qs[j] >> 4) * a[j + 16];
  }
  return sum;
}

int block_sum(const int8_t* a, int len) {
  int s = 0;
  for (int j = 0; j < len; ++j) s += a[j];
  return s;
}

float dot_q4_0(int64_t n, const void* w, const void* a) {
  const auto* x = static_cast<const BlockQ4_0*>(w);
  const auto* y = static_cast<const BlockQ8_0*>(a);
  float sum = 0;
  for (int64_t i = 0; i < n / kQK; ++i) {
    const int s = nibble_dot(x[i].qs, y[i].qs, [](int q) { return q - 8; });
    sum += fp16_to_fp32(x[i].d) * fp16_to_fp32(y[i].d) * static_cast<float>(s);
  }
  return sum;
}

float dot_q4_1(int64_t n, const void* w, const void* a) {
  const auto* x = static_cast<const BlockQ4_1*>(w);
  const auto* y = static_cast<const BlockQ8_0*>(a);
  float sum = 0;
  for (int64_t i = 0; i < n / kQK; ++i) {
    const int s = nibble_dot(x[i].qs, y[i].qs, [](int q) { return q; });
    const float da = fp16_to_fp32(y[i].d);
    sum += fp16_to_fp32(x[i].d) * da * static_cast<float>(s) +
           fp16_to_fp32(x[i].m) * da * static_cast<float>(block_sum(y[i].qs, kQK));
  }
  return sum;
}

// Five-bit codes of a Q5 block: nibble plus bit j of qh as bit 4.
void unpack_q5(const uint8_t* qs, const uint8_t* qh_bytes, int* q) {
  uint32_t qh;
  std::memcpy(&qh, qh_bytes, sizeof(qh));
  for (int j = 0; j < 16; ++j) {
    q[j] = (qs[j] & 0xF) | static_cast<int>(((qh >> j) & 1u) << 4);
    q[j + 16] = (qs[j] >> 4) | static_cast<int>(((qh >> (j + 16)) & 1u) << 4);
  }
}

float dot_q5_0(int64_t n, const void* w, const void* a) {
  const auto* x = static_cast<const BlockQ5_0*>(w);
  const auto* y = static_cast<const BlockQ8_0*>(a);
  float sum = 0;
  int q[kQK];
  for (int64_t i = 0; i < n / kQK; ++i) {
    unpack_q5(x[i].qs, x[i].qh, q);
    int s = 0;
    for (int j = 0; j < kQK; ++j) s += (q[j] - 16) * y[i].qs[j];
    sum += fp16_to_fp32(x[i].d) * fp16_to_fp32(y[i].d) * static_cast<float>(s);
  }
  return sum;
}

float dot_q5_1(int64_t n, const void* w, const void* a) {
  const auto* x = static_cast<const BlockQ5_1*>(w);
  const auto* y = static_cast<const BlockQ8_0*>(a);
  float sum = 0;
  int q[kQK];
  for (int64_t i = 0; i < n / kQK; ++i) {
    unpack_q5(x[i].qs, x[i].qh, q);
    int s = 0;
    for (int j = 0; j < kQK; ++j) s += q[j] * y[i].qs[j];
    const float da = fp16_to_fp32(y[i].d);
    sum += fp16_to_fp32(x[i].d) * da * static_cast<float>(s) +
           fp16_to_fp32(x[i].m) * da * static_cast<float>(block_sum(y[i].qs, kQK));
  }
  return sum;
}

float dot_q8_0(int64_t n, const void* w, const void* a) {
  const auto* x = static_cast<const BlockQ8_0*>(w);
  const auto* y = static_cast<const BlockQ8_0*>(a);
  float sum = 0;
  for (int64_t i = 0; i < n / kQK; ++i) {
    int s = 0;
    for (int j = 0; j < kQK; ++j) s += x[i].qs[j] * y[i].qs[j];
    sum += fp16_to_fp32(x[i].d) * fp16_to_fp32(y[i].d) * static_cast<float>(s);
  }
  return sum;
}

float dot_iq4_nl(int64_t n, const void* w, const void* a) {
  const auto* x = static_cast<const BlockIQ4_NL*>(w);
  const auto* y = static_cast<const BlockQ8_0*>(a);
  float sum = 0;
  for (int64_t i = 0; i < n / kQK; ++i) {
    const int s = nibble_dot(x[i].qs, y[i].qs, [](int q) { return static_cast<int>(kIq4Values[q]); });
    sum += fp16_to_fp32(x[i].d) * fp16_to_fp32(y[i].d) * static_cast<float>(s);
  }
  return sum;
}

// K-quants: integer sums per sub-block, scaled by the sub-block's integer
// scale, then one float scale per super-block.
float dot_q2_k(int64_t n, const void* w, const void* a) {
  const auto* x = static_cast<const BlockQ2_K*>(w);
  const auto* y = static_cast<const BlockQ8_K*>(a);
  float sum = 0;
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    int sumi = 0, summ = 0;
    for (int j = 0; j < kQK_K / 16; ++j) {
      // Sub-block j: half j / 8, shift 2 * ((j % 8) / 2), bytes 16 * (j % 2) of that half.
      const uint8_t* q = x[i].qs + 32 * (j / 8) + 16 * (j % 2);
      const int shift = 2 * ((j % 8) / 2);
      int s = 0;
      for (int l = 0; l < 16; ++l) s += ((q[l] >> shift) & 3) * y[i].qs[16 * j + l];
      sumi += (x[i].scales[j] & 0xF) * s;
      summ += (x[i].scales[j] >> 4) * y[i].bsums[j];
    }
    sum += y[i].d * (fp16_to_fp32(x[i].d) * static_cast<float>(sumi) -
                     fp16_to_fp32(x[i].dmin) * static_cast<float>(summ));
  }
  return sum;
}

float dot_q3_k(int64_t n, const void* w, const void* a) {
  const auto* x = static_cast<const BlockQ3_K*>(w);
  const auto* y = static_cast<const BlockQ8_K*>(a);
  float sum = 0;
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    int sumi = 0;
    for (int j = 0; j < kQK_K / 16; ++j) {
      const int off = 32 * (j / 8) + 16 * (j % 2);
      const uint8_t* q = x[i].qs + off;
      const uint8_t* hm = x[i].hmask + 16 * (j % 2);
      const int shift = 2 * ((j % 8) / 2);
      const int bit = j / 2;  // value index / 32
      int s = 0;
      for (int l = 0; l < 16; ++l) {
        const int v = ((q[l] >> shift) & 3) - (((hm[l] >> bit) & 1) ? 0 : 4);
        s += v * y[i].qs[16 * j + l];
      }
      sumi += q3k_scale(x[i].scales, j) * s;
    }
    sum += y[i].d * fp16_to_fp32(x[i].d) * static_cast<float>(sumi);
  }
  return sum;
}

float dot_q4_k(int64_t n, const void* w, const void* a) {
  const auto* x = static_cast<const BlockQ4_K*>(w);
  const auto* y = static_cast<const BlockQ8_K*>(a);
  float sum = 0;
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    int sumi = 0, summ = 0;
    for (int j = 0; j < kQK_K / 32; ++j) {
      uint8_t sc, m;
      scale_min_k4(j, x[i].scales, &sc, &m);
      const uint8_t* q = x[i].qs + 32 * (j / 2);
      const int shift = 4 * (j % 2);
      int s = 0;
      for (int l = 0; l < 32; ++l) s += ((q[l] >> shift) & 0xF) * y[i].qs[32 * j + l];
      sumi += sc * s;
      summ += m * (y[i].bsums[2 * j] + y[i].bsums[2 * j + 1]);
    }
    sum += y[i].d * (fp16_to_fp32(x[i].d) * static_cast<float>(sumi) -
                     fp16_to_fp32(x[i].dmin) * static_cast<float>(summ));
  }
  return sum;
}

float dot_q5_k(int64_t n, const void* w, const void* a) {
  const auto* x = static_cast<const BlockQ5_K*>(w);
  const auto* y = static_cast<const BlockQ8_K*>(a);
  float sum = 0;
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    int sumi = 0, summ = 0;
    for (int j = 0; j < kQK_K / 32; ++j) {
      uint8_t sc, m;
      scale_min_k4(j, x[i].scales, &sc, &m);
      const uint8_t* q = x[i].qs + 32 * (j / 2);
      const int shift = 4 * (j % 2);
      int s = 0;
      for (int l = 0; l < 32; ++l) {
        const int v = ((q[l] >> shift) & 0xF) | (((x[i].qh[l] >> j) & 1) << 4);
        s += v * y[i].qs[32 * j + l];
      }
      sumi += sc * s;
      summ += m * (y[i].bsums[2 * j] + y[i].bsums[2 * j + 1]);
    }
    sum += y[i].d * (fp16_to_fp32(x[i].d) * static_cast<float>(sumi) -
                     fp16_to_fp32(x[i].dmin) * static_cast<float>(summ));
  }
  return sum;
}

float dot_q6_k(int64_t n, const void* w, const void* a) {
  const auto* x = static_cast<const BlockQ6_K*>(w);
  const auto* y = static_cast<const BlockQ8_K*>(a);
  float sum = 0;
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    int sumi = 0;
    for (int v = 0; v < kQK_K; v += 16) {
      // Value v: half h, group g (32 values), position l in the group.
      int s = 0;
      for (int t = v; t < v + 16; ++t) {
        const int h = t / 128, g = (t % 128) / 32, l = t % 32;
        const uint8_t ql = x[i].ql[64 * h + l + 32 * (g % 2)];
        const int low = g < 2 ? (ql & 0xF) : (ql >> 4);
        const int high = (x[i].qh[32 * h + l] >> (2 * g)) & 3;
        s += ((low | (high << 4)) - 32) * y[i].qs[t];
      }
      sumi += x[i].scales[v / 16] * s;
    }
    sum += y[i].d * fp16_to_fp32(x[i].d) * static_cast<float>(sumi);
  }
  return sum;
}

float dot_iq4_xs(int64_t n, const void* w, const void* a) {
  const auto* x = static_cast<const BlockIQ4_XS*>(w);
  const auto* y = static_cast<const BlockQ8_K*>(a);
  float sum = 0;
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    int sumi = 0;
    for (int ib = 0; ib < kQK_K / 32; ++ib) {
      const int s = nibble_dot(x[i].qs + 16 * ib, y[i].qs + 32 * ib,
                               [](int q) { return static_cast<int>(kIq4Values[q]); });
      sumi += iq4xs_scale(x[i], ib) * s;
    }
    sum += y[i].d * fp16_to_fp32(x[i].d) * static_cast<float>(sumi);
  }
  return sum;
}

void halves_to_floats(const uint16_t* src, float* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = fp16_to_fp32(src[i]);
}

void floats_to_halves(const float* src, uint16_t* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = fp32_to_fp16(src[i]);
}

}  // namespace

void fill_scalar(KernelTable& t) {
  constexpr auto L = KernelLevel::Scalar;
  set_kernel(t, DType::F32, DType::F32, dot_f32, gemm_by_dot<dot_f32>, L);
  set_kernel(t, DType::F16, DType::F32, dot_f16, gemm_by_dot<dot_f16>, L);
  set_kernel(t, DType::BF16, DType::F32, dot_bf16, gemm_by_dot<dot_bf16>, L);
  set_kernel(t, DType::Q4_0, DType::Q8_0, dot_q4_0, gemm_by_dot<dot_q4_0>, L);
  set_kernel(t, DType::Q4_1, DType::Q8_0, dot_q4_1, gemm_by_dot<dot_q4_1>, L);
  set_kernel(t, DType::Q5_0, DType::Q8_0, dot_q5_0, gemm_by_dot<dot_q5_0>, L);
  set_kernel(t, DType::Q5_1, DType::Q8_0, dot_q5_1, gemm_by_dot<dot_q5_1>, L);
  set_kernel(t, DType::Q8_0, DType::Q8_0, dot_q8_0, gemm_by_dot<dot_q8_0>, L);
  set_kernel(t, DType::IQ4_NL, DType::Q8_0, dot_iq4_nl, gemm_by_dot<dot_iq4_nl>, L);
  set_kernel(t, DType::Q2_K, DType::Q8_K, dot_q2_k, gemm_by_dot<dot_q2_k>, L);
  set_kernel(t, DType::Q3_K, DType::Q8_K, dot_q3_k, gemm_by_dot<dot_q3_k>, L);
  set_kernel(t, DType::Q4_K, DType::Q8_K, dot_q4_k, gemm_by_dot<dot_q4_k>, L);
  set_kernel(t, DType::Q5_K, DType::Q8_K, dot_q5_k, gemm_by_dot<dot_q5_k>, L);
  set_kernel(t, DType::Q6_K, DType::Q8_K, dot_q6_k, gemm_by_dot<dot_q6_k>, L);
  set_kernel(t, DType::IQ4_XS, DType::Q8_K, dot_iq4_xs, gemm_by_dot<dot_iq4_xs>, L);
  set_kernel(t, DType::MXFP4, DType::Q8_0, dot_mxfp4_scalar, gemm_by_dot<dot_mxfp4_scalar>, L);
  for (size_t id = 0; id < t.by_type.size(); ++id) {
    if (t.by_type[id].vec_dot) t.by_type[id].quantize = reference_quantizer(static_cast<DType>(id));
  }
  t.quantize_q8_0 = quantize_row_q8_0;
  t.quantize_q8_k = quantize_row_q8_k;
  t.f16_to_f32 = halves_to_floats;
  t.f32_to_f16 = floats_to_halves;
}

}  // namespace hearth::quant::detail
