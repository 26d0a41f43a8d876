#include "weight_rows.h"

#include <hearth/engine/quant/fp16.h>
#include <hearth/engine/quant/reference.h>

#include <algorithm>
#include <cstring>

namespace hearth::backend::cpu {

bool has_row_ops(DType type) {
  return type == DType::F32 || type == DType::F16 || type == DType::BF16 || quant::has_reference(type);
}

void row_to_f32(DType type, const void* row, float* out, int64_t n) {
  switch (type) {
    case DType::F32: std::memcpy(out, row, static_cast<size_t>(n) * 4); return;
    case DType::F16: {
      const auto* h = static_cast<const uint16_t*>(row);
      for (int64_t i = 0; i < n; ++i) out[i] = quant::fp16_to_fp32(h[i]);
      return;
    }
    case DType::BF16: {
      const auto* h = static_cast<const uint16_t*>(row);
      for (int64_t i = 0; i < n; ++i) out[i] = quant::bf16_to_fp32(h[i]);
      return;
    }
    default: (void)quant::dequantize_row(type, row, out, n); return;
  }
}

float row_dot_f32(DType type, const void* row, const float* x, int64_t n) {
  if (type == DType::F32) {
    const auto* w = static_cast<const float*>(row);
    float acc[8] = {};
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
      for (int j = 0; j < 8; ++j) acc[j] += w[i + j] * x[i + j];
    }
    float s = 0;
    for (; i < n; ++i) s += w[i] * x[i];
    for (float a : acc) s += a;
    return s;
  }
  // Convert in chunks that are whole blocks of every format (256 values).
  constexpr int64_t kChunk = 256;
  float buf[kChunk];
  const auto& t = traits(type);
  const auto* bytes = static_cast<const uint8_t*>(row);
  float acc[8] = {};
  for (int64_t start = 0; start < n; start += kChunk) {
    const int64_t len = std::min(kChunk, n - start);
    row_to_f32(type, bytes + static_cast<size_t>(start / t.block_elements) * t.block_bytes, buf, len);
    for (int64_t i = 0; i < len; ++i) acc[i & 7] += buf[i] * x[start + i];
  }
  float s = 0;
  for (float a : acc) s += a;
  return s;
}

}  // namespace hearth::backend::cpu
