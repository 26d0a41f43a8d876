// Test data for the weight shaders: random blocks (every bit pattern, sane
// f16 scales) and their dequantization by hearth_quant's scalar reference,
// the oracle every kernel is checked against.
#pragma once

#include <hearth/engine/quant/reference.h>
#include <hearth/engine/quant/types.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "vulkan_test_env.h"

namespace hearth::vulkan::testing {

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

// All rows dequantized by the scalar reference: [rows][cols].
inline std::vector<float> dequant_rows(DType type, const std::vector<uint8_t>& data, uint32_t rows, uint32_t cols) {
  std::vector<float> out(static_cast<size_t>(rows) * cols);
  const uint64_t stride = row_bytes(type, cols).value();
  for (uint32_t r = 0; r < rows; ++r) {
    const auto st = quant::dequantize_row(type, data.data() + r * stride, out.data() + size_t{r} * cols, cols);
    EXPECT_TRUE(st.ok()) << (st.ok() ? "" : st.error().message);
  }
  return out;
}

// Random floats quantized by the reference quantizer: realistic scales.
inline std::vector<uint8_t> quantized_rows(DType type, uint32_t rows, uint32_t cols, std::mt19937& rng) {
  const uint64_t stride = row_bytes(type, cols).value();
  std::vector<uint8_t> data(stride * rows);
  std::normal_distribution<float> dist(0.0f, 0.5f);
  std::vector<float> row(cols);
  for (uint32_t r = 0; r < rows; ++r) {
    for (auto& v : row) v = dist(rng);
    const auto st = quant::quantize_row(type, row.data(), data.data() + r * stride, cols);
    EXPECT_TRUE(st.ok()) << (st.ok() ? "" : st.error().message);
  }
  return data;
}

}  // namespace hearth::vulkan::testing
