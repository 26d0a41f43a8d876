#include "weight_rows.h"

#include <cstring>

namespace hearth::backend::cpu {

float f16_to_f32(uint16_t h) {
  _Float16 v;
  std::memcpy(&v, &h, 2);
  return static_cast<float>(v);
}

uint16_t f32_to_f16(float f) {
  const _Float16 v = static_cast<_Float16>(f);
  uint16_t h;
  std::memcpy(&h, &v, 2);
  return h;
}

namespace {

float bf16_to_f32(uint16_t b) {
  const uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

void f32_to_f32(const void* row, float* out, int64_t n) { std::memcpy(out, row, static_cast<size_t>(n) * 4); }
float dot_f32_f32(const void* row, const float* x, int64_t n) {
  const float* w = static_cast<const float*>(row);
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

void f16_rows_to_f32(const void* row, float* out, int64_t n) {
  const _Float16* w = static_cast<const _Float16*>(row);
  for (int64_t i = 0; i < n; ++i) out[i] = static_cast<float>(w[i]);
}
float dot_f16_f32(const void* row, const float* x, int64_t n) {
  const _Float16* w = static_cast<const _Float16*>(row);
  float acc[16] = {};
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    for (int j = 0; j < 16; ++j) acc[j] += static_cast<float>(w[i + j]) * x[i + j];
  }
  float s = 0;
  for (; i < n; ++i) s += static_cast<float>(w[i]) * x[i];
  for (float a : acc) s += a;
  return s;
}

void bf16_rows_to_f32(const void* row, float* out, int64_t n) {
  const uint16_t* w = static_cast<const uint16_t*>(row);
  for (int64_t i = 0; i < n; ++i) out[i] = bf16_to_f32(w[i]);
}
float dot_bf16_f32(const void* row, const float* x, int64_t n) {
  const uint16_t* w = static_cast<const uint16_t*>(row);
  float s = 0;
  for (int64_t i = 0; i < n; ++i) s += bf16_to_f32(w[i]) * x[i];
  return s;
}

constexpr WeightRowOps kF32{f32_to_f32, dot_f32_f32};
constexpr WeightRowOps kF16{f16_rows_to_f32, dot_f16_f32};
constexpr WeightRowOps kBF16{bf16_rows_to_f32, dot_bf16_f32};

}  // namespace

const WeightRowOps* weight_row_ops(DType type) {
  switch (type) {
    case DType::F32: return &kF32;
    case DType::F16: return &kF16;
    case DType::BF16: return &kBF16;
    default: return nullptr;
  }
}

}  // namespace hearth::backend::cpu
