#include <gtest/gtest.h>
#include <hearth/engine/quant/blocks.h>
#include <hearth/engine/quant/fp16.h>
#include <hearth/engine/quant/reference.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

namespace hearth::quant {
namespace {

// A hand-built block whose largest magnitude is exactly 127: d = 1, so the
// codes are the values themselves.
TEST(QuantizeQ8_0, HandComputedBlock) {
  float x[32];
  for (int j = 0; j < 32; ++j) x[j] = static_cast<float>(4 * j - 64);
  x[31] = 127.0f;
  BlockQ8_0 b{};
  ASSERT_TRUE(quantize_row(DType::Q8_0, x, &b, 32).ok());
  EXPECT_EQ(b.d, 0x3c00);  // 1.0 in half precision
  for (int j = 0; j < 32; ++j) EXPECT_EQ(b.qs[j], static_cast<int8_t>(x[j])) << j;
}

// The most negative value -8 gives d = max / -8 = 1; codes are x + 8.
TEST(QuantizeQ4_0, HandComputedBlock) {
  float x[32];
  for (int j = 0; j < 32; ++j) x[j] = static_cast<float>(j % 16 - 8);
  BlockQ4_0 b{};
  ASSERT_TRUE(quantize_row(DType::Q4_0, x, &b, 32).ok());
  EXPECT_EQ(b.d, 0x3c00);
  for (int j = 0; j < 16; ++j) {
    EXPECT_EQ(b.qs[j], static_cast<uint8_t>((j % 16) | ((j % 16) << 4))) << j;
  }
  // Halfway codes round up (x / d + 8.5 truncated): 0.5 -> 9, -0.5 -> 8.
  x[1] = 0.5f;
  x[17] = -0.5f;
  ASSERT_TRUE(quantize_row(DType::Q4_0, x, &b, 32).ok());
  EXPECT_EQ(b.qs[1], 9 | (8 << 4));
}

TEST(DequantizeQ4_K, HandBuiltBlock) {
  // d = 1, dmin = 0.5; sub-block 0 scale 2 min 3, others scale 1 min 0;
  // all codes 5 in sub-block 0 (low nibbles of bytes 0..31), 7 elsewhere.
  BlockQ4_K b{};
  b.d = fp32_to_fp16(1.0f);
  b.dmin = fp32_to_fp16(0.5f);
  b.scales[0] = 2;
  b.scales[4] = 3;
  for (int j = 1; j < 4; ++j) b.scales[j] = 1;
  for (int j = 8; j < 12; ++j) b.scales[j] = 0x01;  // sub-blocks 4..7: scale 1 (low nibble), min 0
  for (int l = 0; l < 128; ++l) b.qs[l] = 0x77;
  for (int l = 0; l < 32; ++l) b.qs[l] = 0x75;
  std::vector<float> y(256);
  ASSERT_TRUE(dequantize_row(DType::Q4_K, &b, y.data(), 256).ok());
  for (int l = 0; l < 32; ++l) EXPECT_EQ(y[l], 2 * 5 - 0.5f * 3);
  for (int l = 32; l < 256; ++l) EXPECT_EQ(y[l], 7.0f) << l;
}

TEST(DequantizeQ6_K, HandBuiltBlock) {
  // All codes 40 (low nibble 8, high bits 2) and scale 3: x = d * 3 * (40 - 32).
  BlockQ6_K b{};
  b.d = fp32_to_fp16(0.25f);
  std::memset(b.ql, 0x88, sizeof(b.ql));
  std::memset(b.qh, 0xAA, sizeof(b.qh));
  for (auto& s : b.scales) s = 3;
  std::vector<float> y(256);
  ASSERT_TRUE(dequantize_row(DType::Q6_K, &b, y.data(), 256).ok());
  for (float v : y) EXPECT_EQ(v, 0.25f * 3 * 8);
}

TEST(QuantizeRow, RejectsBadShapesAndTypes) {
  std::vector<float> x(48, 1.0f);
  std::vector<uint8_t> out(1024);
  EXPECT_FALSE(quantize_row(DType::Q4_0, x.data(), out.data(), 48).ok());
  EXPECT_FALSE(quantize_row(DType::Q4_K, x.data(), out.data(), 32).ok());
  EXPECT_FALSE(dequantize_row(DType::I32, out.data(), x.data(), 32).ok());
  EXPECT_FALSE(has_reference(DType::Q8_1));
}

struct ErrorCase {
  DType type;
  int bits;   // effective bits per value
  int group;  // values sharing one scale
};

// Round-trip error on Gaussian data. A uniform quantizer with step
// range / 2^bits has RMS error step / sqrt(12); a group of N Gaussian values
// spans about 2 sqrt(2 ln 2N) sigma, so the bound is that over sqrt(12) 2^bits,
// with 25% margin.
class RoundTrip : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(RoundTrip, ErrorWithinTheFormatsResolution) {
  const auto [type, bits, group] = GetParam();
  const int64_t n = 4096;
  std::mt19937 rng(42);
  std::normal_distribution<float> dist(0.0f, 0.02f);
  std::vector<float> x(n), y(n);
  for (auto& v : x) v = dist(rng);
  std::vector<uint8_t> q(*row_bytes(type, n));
  ASSERT_TRUE(quantize_row(type, x.data(), q.data(), n).ok());
  ASSERT_TRUE(dequantize_row(type, q.data(), y.data(), n).ok());
  double err = 0, ref = 0;
  for (int64_t i = 0; i < n; ++i) {
    err += (y[i] - x[i]) * (y[i] - x[i]);
    ref += x[i] * x[i];
  }
  const double rel = std::sqrt(err / ref);
  const double span = 2.0 * std::sqrt(2.0 * std::log(2.0 * group));
  const double bound = 1.25 * span / std::sqrt(12.0) / std::ldexp(1.0, bits);
  EXPECT_LT(rel, bound) << traits(type).name;
  EXPECT_GT(rel, 0.0) << "a lossy format reproduced random data exactly";
}

INSTANTIATE_TEST_SUITE_P(
    AllFormats, RoundTrip,
    ::testing::Values(ErrorCase{DType::Q8_0, 8, 32}, ErrorCase{DType::Q4_0, 4, 32},
                      ErrorCase{DType::Q4_1, 4, 32}, ErrorCase{DType::Q5_0, 5, 32},
                      ErrorCase{DType::Q5_1, 5, 32}, ErrorCase{DType::Q2_K, 2, 16},
                      ErrorCase{DType::Q3_K, 3, 16}, ErrorCase{DType::Q4_K, 4, 32},
                      ErrorCase{DType::Q5_K, 5, 32}, ErrorCase{DType::Q6_K, 6, 16},
                      ErrorCase{DType::Q8_K, 8, 256}, ErrorCase{DType::IQ4_NL, 4, 32},
                      ErrorCase{DType::IQ4_XS, 4, 32}, ErrorCase{DType::F16, 11, 1},
                      ErrorCase{DType::BF16, 8, 1}),
    [](const auto& p) { return std::string(traits(p.param.type).name); });

// Zero blocks must give zeros, not NaN from a 0/0 scale.
TEST(QuantizeRow, ZeroRowsStayZero) {
  for (DType t : {DType::Q4_0, DType::Q4_1, DType::Q5_0, DType::Q5_1, DType::Q8_0, DType::Q2_K,
                  DType::Q3_K, DType::Q4_K, DType::Q5_K, DType::Q6_K, DType::Q8_K, DType::IQ4_NL,
                  DType::IQ4_XS, DType::MXFP4}) {
    std::vector<float> x(256, 0.0f), y(256, 1.0f);
    std::vector<uint8_t> q(*row_bytes(t, 256));
    ASSERT_TRUE(quantize_row(t, x.data(), q.data(), 256).ok());
    ASSERT_TRUE(dequantize_row(t, q.data(), y.data(), 256).ok());
    for (float v : y) ASSERT_EQ(v, 0.0f) << traits(t).name;
  }
}

// Q8_K's bsums are the sums of each 16 codes; its largest value maps to -127.
TEST(QuantizeQ8_K, BsumsAndScale) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> x(256);
  for (auto& v : x) v = dist(rng);
  x[100] = 2.0f;
  BlockQ8_K b{};
  quantize_row_q8_k(x.data(), &b, 256);
  EXPECT_EQ(b.qs[100], -127);
  EXPECT_FLOAT_EQ(b.d, 2.0f / -127.0f);
  for (int j = 0; j < 16; ++j) {
    int s = 0;
    for (int l = 0; l < 16; ++l) s += b.qs[16 * j + l];
    EXPECT_EQ(b.bsums[j], s);
  }
}

}  // namespace
}  // namespace hearth::quant
