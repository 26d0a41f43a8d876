// Shared by the kernel test files (kernels_test.cpp, kernels_edge_test.cpp):
// random quantized rows, error scales, and the per-level fixture (one type
// for every file, so the levels instantiated once cover the tests of both).
#pragma once

#include <gtest/gtest.h>
#include <hearth/engine/quant/kernels.h>
#include <hearth/engine/quant/reference.h>

#include <cmath>
#include <random>
#include <vector>

namespace hearth::quant::kernel_tests {

inline constexpr DType kWeightTypes[] = {DType::F32,  DType::F16,  DType::BF16, DType::Q4_0,   DType::Q4_1,
                              DType::Q5_0, DType::Q5_1, DType::Q8_0, DType::IQ4_NL, DType::Q2_K,
                              DType::Q3_K, DType::Q4_K, DType::Q5_K, DType::Q6_K,   DType::IQ4_XS,
                              DType::MXFP4};

struct Matrix {
  std::vector<uint8_t> bytes;
  size_t row_bytes = 0;
  std::vector<float> values;  // dequantized, row-major
};

// Rows of random Gaussian values with a different scale per row, stored as `type`.
inline Matrix random_rows(DType type, int64_t rows, int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  Matrix m;
  m.row_bytes = *row_bytes(type, n);
  m.bytes.resize(m.row_bytes * static_cast<size_t>(rows));
  m.values.resize(static_cast<size_t>(rows * n));
  std::vector<float> x(static_cast<size_t>(n));
  for (int64_t r = 0; r < rows; ++r) {
    const float scale = 0.01f * static_cast<float>(1 + r % 5);
    for (auto& v : x) v = scale * dist(rng);
    EXPECT_TRUE(quantize_row(type, x.data(), m.bytes.data() + r * m.row_bytes, n).ok());
    EXPECT_TRUE(dequantize_row(type, m.bytes.data() + r * m.row_bytes, m.values.data() + r * n, n).ok());
  }
  return m;
}

// Sum of |w_i a_i| in double: the scale of the rounding error to allow.
inline double magnitude(const float* w, const float* a, int64_t n) {
  double s = 0;
  for (int64_t i = 0; i < n; ++i) s += std::fabs(static_cast<double>(w[i]) * a[i]);
  return s;
}
inline double exact_dot(const float* w, const float* a, int64_t n) {
  double s = 0;
  for (int64_t i = 0; i < n; ++i) s += static_cast<double>(w[i]) * a[i];
  return s;
}

inline std::vector<int64_t> lengths_for(DType type) {
  if (traits(type).block_elements == 256) return {256, 512, 768, 2304};
  if (traits(type).block_elements == 32) return {32, 64, 96, 160, 2080};
  return {1, 7, 8, 33, 100, 256, 1000};
}

class LevelTest : public ::testing::TestWithParam<KernelLevel> {
 protected:
  void SetUp() override {
    const CpuFeatures f = detect_cpu_features();
    bool supported = false;
    for (auto l : supported_levels(f)) supported |= l == GetParam();
    if (!supported) GTEST_SKIP() << "CPU lacks " << to_string(GetParam());
    table_ = select_kernels(f, GetParam());
    scalar_ = select_kernels(f, KernelLevel::Scalar);
  }
  KernelTable table_;
  KernelTable scalar_;
};

}  // namespace hearth::quant::kernel_tests
