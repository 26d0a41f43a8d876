// Dispatch of the reference conversions by type, with shape checks.
#include "hearth/engine/quant/reference.h"

#include <fmt/format.h>

#include <cstring>

#include "hearth/engine/quant/fp16.h"
#include "ref_internal.h"

namespace hearth::quant {
namespace {

using DequantFn = void (*)(const void*, float*, int64_t);
using QuantFn = void (*)(const float*, void*, int64_t);

void dequantize_f32(const void* src, float* y, int64_t n) {
  std::memcpy(y, src, static_cast<size_t>(n) * sizeof(float));
}
void dequantize_f16(const void* src, float* y, int64_t n) {
  const auto* h = static_cast<const uint16_t*>(src);
  for (int64_t i = 0; i < n; ++i) y[i] = fp16_to_fp32(h[i]);
}
void dequantize_bf16(const void* src, float* y, int64_t n) {
  const auto* h = static_cast<const uint16_t*>(src);
  for (int64_t i = 0; i < n; ++i) y[i] = bf16_to_fp32(h[i]);
}
void quantize_f32(const float* x, void* dst, int64_t n) {
  std::memcpy(dst, x, static_cast<size_t>(n) * sizeof(float));
}
void quantize_f16(const float* x, void* dst, int64_t n) {
  auto* h = static_cast<uint16_t*>(dst);
  for (int64_t i = 0; i < n; ++i) h[i] = fp32_to_fp16(x[i]);
}
void quantize_bf16(const float* x, void* dst, int64_t n) {
  auto* h = static_cast<uint16_t*>(dst);
  for (int64_t i = 0; i < n; ++i) h[i] = fp32_to_bf16(x[i]);
}

struct Converters {
  DequantFn dequantize = nullptr;
  QuantFn quantize = nullptr;
};

Converters converters(DType type) {
  using namespace detail;
  switch (type) {
    case DType::F32: return {dequantize_f32, quantize_f32};
    case DType::F16: return {dequantize_f16, quantize_f16};
    case DType::BF16: return {dequantize_bf16, quantize_bf16};
    case DType::Q4_0: return {dequantize_q4_0, quantize_q4_0};
    case DType::Q4_1: return {dequantize_q4_1, quantize_q4_1};
    case DType::Q5_0: return {dequantize_q5_0, quantize_q5_0};
    case DType::Q5_1: return {dequantize_q5_1, quantize_q5_1};
    case DType::Q8_0: return {dequantize_q8_0, quantize_row_q8_0};
    case DType::Q2_K: return {dequantize_q2_k, quantize_q2_k};
    case DType::Q3_K: return {dequantize_q3_k, quantize_q3_k};
    case DType::Q4_K: return {dequantize_q4_k, quantize_q4_k};
    case DType::Q5_K: return {dequantize_q5_k, quantize_q5_k};
    case DType::Q6_K: return {dequantize_q6_k, quantize_q6_k};
    case DType::Q8_K: return {dequantize_q8_k, quantize_row_q8_k};
    case DType::IQ4_NL: return {dequantize_iq4_nl, quantize_iq4_nl};
    case DType::IQ4_XS: return {dequantize_iq4_xs, quantize_iq4_xs};
    case DType::MXFP4: return {dequantize_mxfp4, quantize_mxfp4};
    default: return {};
  }
}

Status check_shape(DType type, int64_t n, const char* what) {
  const auto& t = traits(type);
  if (!converters(type).dequantize) {
    return make_error(ErrorCode::Unsupported, fmt::format("cannot {} type {}", what, t.name));
  }
  if (n < 0 || n % t.block_elements != 0) {
    return make_error(ErrorCode::InvalidArgument,
                      fmt::format("cannot {} a row of {} values as {}: not a multiple of the block size {}",
                                  what, n, t.name, t.block_elements));
  }
  return {};
}

}  // namespace

bool has_reference(DType type) { return converters(type).dequantize != nullptr; }

namespace detail {
RowQuantizer reference_quantizer(DType type) { return converters(type).quantize; }
}  // namespace detail

Status dequantize_row(DType type, const void* src, float* dst, int64_t n) {
  if (auto st = check_shape(type, n, "dequantize"); !st) return st;
  converters(type).dequantize(src, dst, n);
  return {};
}

Status quantize_row(DType type, const float* src, void* dst, int64_t n) {
  if (auto st = check_shape(type, n, "quantize"); !st) return st;
  converters(type).quantize(src, dst, n);
  return {};
}

}  // namespace hearth::quant
