// Importance-weighted block searches against the plain ones: on the same
// rows, weighting the search by the importance must lower the
// importance-weighted squared error sum_j importance[j] * (x_j - q_j)^2,
// the quantity the weights are there to reduce, for every format that takes
// them. Both errors come from dequantizing with the scalar reference.
#include <gtest/gtest.h>
#include <hearth/engine/quant/reference.h>
#include <hearth/engine/quant/weighted.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

namespace hearth::quant {
namespace {

// A small deterministic generator (values in [0, 1)).
struct Lcg {
  uint64_t s;
  float next() {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<float>((s >> 40) & 0xFFFFFF) / 16777216.0f;
  }
  float normal() {  // sum of uniforms: close enough to a bell for weights
    float v = 0;
    for (int i = 0; i < 6; ++i) v += next();
    return v - 3.0f;
  }
};

double weighted_error(DType type, const std::vector<uint8_t>& q, const std::vector<float>& x,
                      const std::vector<float>& imp, int64_t cols, int64_t rows) {
  const uint64_t rb = *row_bytes(type, cols);
  std::vector<float> back(static_cast<size_t>(cols));
  double e = 0;
  for (int64_t r = 0; r < rows; ++r) {
    EXPECT_TRUE(dequantize_row(type, q.data() + r * rb, back.data(), cols));
    for (int64_t c = 0; c < cols; ++c) {
      const double d = back[static_cast<size_t>(c)] - x[static_cast<size_t>(r * cols + c)];
      e += imp[static_cast<size_t>(c)] * d * d;
    }
  }
  return e;
}

TEST(WeightedQuant, ImportanceLowersTheWeightedErrorOfEveryFormatThatTakesIt) {
  const int64_t cols = 512, rows = 48;
  Lcg g{42};
  std::vector<float> x(static_cast<size_t>(cols * rows));
  for (auto& v : x) v = 0.05f * g.normal();
  // Activation statistics are heavy-tailed: a few columns dominate.
  std::vector<float> imp(static_cast<size_t>(cols));
  for (auto& v : imp) v = std::exp(6.0f * g.next()) * 1e-3f;
  for (DType type : {DType::Q2_K, DType::Q3_K, DType::Q4_K, DType::Q5_K, DType::Q6_K, DType::Q4_0, DType::Q4_1,
                     DType::Q5_0, DType::Q5_1, DType::IQ4_NL, DType::IQ4_XS}) {
    ASSERT_TRUE(takes_importance(type)) << traits(type).name;
    const uint64_t rb = *row_bytes(type, cols);
    std::vector<uint8_t> plain(rb * rows), weighted(rb * rows);
    for (int64_t r = 0; r < rows; ++r) {
      ASSERT_TRUE(quantize_row(type, x.data() + r * cols, plain.data() + r * rb, cols));
      ASSERT_TRUE(quantize_row_weighted(type, x.data() + r * cols, weighted.data() + r * rb, cols, imp.data()));
    }
    const double e_plain = weighted_error(type, plain, x, imp, cols, rows);
    const double e_weighted = weighted_error(type, weighted, x, imp, cols, rows);
    std::printf("%-7s weighted error: plain %.6g, with importance %.6g (%.1f%% lower)\n",
                std::string(traits(type).name).c_str(), e_plain, e_weighted, 100.0 * (1.0 - e_weighted / e_plain));
    EXPECT_LT(e_weighted, e_plain) << traits(type).name;
  }
}

TEST(WeightedQuant, ZeroImportanceGivesFiniteBlocks) {
  // Columns no token used have importance 0; whole blocks of them must not
  // divide by zero.
  const int64_t cols = 256;
  Lcg g{7};
  std::vector<float> x(static_cast<size_t>(cols));
  for (auto& v : x) v = g.normal();
  std::vector<float> imp(static_cast<size_t>(cols), 0.0f);
  for (int64_t c = 128; c < cols; ++c) imp[static_cast<size_t>(c)] = 1.0f;
  for (DType type : {DType::Q2_K, DType::Q3_K, DType::Q4_K, DType::Q5_K, DType::Q6_K, DType::Q4_0, DType::Q4_1,
                     DType::Q5_0, DType::Q5_1, DType::IQ4_NL, DType::IQ4_XS}) {
    std::vector<uint8_t> q(*row_bytes(type, cols));
    std::vector<float> back(static_cast<size_t>(cols));
    ASSERT_TRUE(quantize_row_weighted(type, x.data(), q.data(), cols, imp.data()));
    ASSERT_TRUE(dequantize_row(type, q.data(), back.data(), cols));
    for (const float v : back) ASSERT_TRUE(std::isfinite(v)) << traits(type).name;
  }
  // A row that is not whole blocks is refused, not overrun.
  std::vector<uint8_t> q(1024);
  EXPECT_FALSE(quantize_row_weighted(DType::Q4_K, x.data(), q.data(), 100, imp.data()));
}

}  // namespace
}  // namespace hearth::quant
