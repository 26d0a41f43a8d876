// MXFP4 (GGUF type 39): the reference conversions and the scalar dot
// product against Q8_0 activations. The quantizer follows the reference
// engine's: the shared exponent from the block's largest magnitude
// (floor(log2(amax)) - 2, so amax lands in the top of the E2M1 range), then
// each value to the nearest table entry (the first on a tie).
#include <algorithm>
#include <cmath>

#include "hearth/engine/quant/blocks.h"
#include "hearth/engine/quant/fp16.h"
#include "ref_internal.h"

namespace hearth::quant::detail {
namespace {

int nearest_mxfp4(float x, float d) {
  int best = 0;
  float best_err = std::fabs(static_cast<float>(kMxfp4Values[0]) * d - x);
  for (int i = 1; i < 16; ++i) {
    const float err = std::fabs(static_cast<float>(kMxfp4Values[i]) * d - x);
    if (err < best_err) {
      best = i;
      best_err = err;
    }
  }
  return best;
}

}  // namespace

void dequantize_mxfp4(const void* src, float* y, int64_t n) {
  const auto* b = static_cast<const BlockMXFP4*>(src);
  for (int64_t i = 0; i < n / kQK; ++i, y += kQK) {
    const float d = mxfp4_half_scale(b[i].e);
    for (int j = 0; j < kQK / 2; ++j) {
      y[j] = static_cast<float>(kMxfp4Values[b[i].qs[j] & 0xF]) * d;
      y[j + kQK / 2] = static_cast<float>(kMxfp4Values[b[i].qs[j] >> 4]) * d;
    }
  }
}

void quantize_mxfp4(const float* x, void* dst, int64_t n) {
  auto* b = static_cast<BlockMXFP4*>(dst);
  for (int64_t i = 0; i < n / kQK; ++i, x += kQK) {
    float amax = 0.0f;
    for (int j = 0; j < kQK; ++j) amax = std::max(amax, std::fabs(x[j]));
    // Blocks too small for the smallest scale (or zero) get exponent 0.
    const float e = amax > 0.0f ? std::floor(std::log2(amax)) - 2.0f + 127.0f : 0.0f;
    b[i].e = static_cast<uint8_t>(std::clamp(e, 0.0f, 254.0f));
    const float d = mxfp4_half_scale(b[i].e);
    for (int j = 0; j < kQK / 2; ++j) {
      b[i].qs[j] = static_cast<uint8_t>(nearest_mxfp4(x[j], d) | nearest_mxfp4(x[j + kQK / 2], d) << 4);
    }
  }
}

float dot_mxfp4_scalar(int64_t n, const void* w, const void* a) {
  const auto* x = static_cast<const BlockMXFP4*>(w);
  const auto* y = static_cast<const BlockQ8_0*>(a);
  float sum = 0;
  for (int64_t i = 0; i < n / kQK; ++i) {
    int s = 0;
    for (int j = 0; j < kQK / 2; ++j) {
      s += kMxfp4Values[x[i].qs[j] & 0xF] * y[i].qs[j];
      s += kMxfp4Values[x[i].qs[j] >> 4] * y[i].qs[j + kQK / 2];
    }
    sum += mxfp4_half_scale(x[i].e) * fp16_to_fp32(y[i].d) * static_cast<float>(s);
  }
  return sum;
}

}  // namespace hearth::quant::detail
