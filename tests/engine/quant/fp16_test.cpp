#include <gtest/gtest.h>
#include <hearth/engine/quant/fp16.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <random>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace hearth::quant {
namespace {

// Every finite half converts to float and back to itself; values come from
// the IEEE formula sign * 2^(e-15) * (1 + m/1024) computed in double.
TEST(Fp16, EveryHalfValueRoundTripsAndMatchesTheFormula) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const auto bits = static_cast<uint16_t>(h);
    const int e = (bits >> 10) & 0x1f;
    const int m = bits & 0x3ff;
    if (e == 31) continue;  // Inf/NaN checked below
    const double mag = e == 0 ? std::ldexp(m, -24) : std::ldexp(1024 + m, e - 25);
    const double expected = (bits & 0x8000) ? -mag : mag;
    ASSERT_EQ(static_cast<double>(fp16_to_fp32(bits)), expected) << std::hex << h;
    ASSERT_EQ(fp32_to_fp16(fp16_to_fp32(bits)), bits) << std::hex << h;
  }
  EXPECT_TRUE(std::isinf(fp16_to_fp32(0x7c00)));
  EXPECT_TRUE(std::isnan(fp16_to_fp32(0x7e00)));
}

TEST(Fp16, RoundsToNearestEven) {
  // 1 + 2^-11 is halfway between 1 and the next half (1 + 2^-10): ties to even (1).
  EXPECT_EQ(fp32_to_fp16(1.0f + std::ldexp(1.0f, -11)), 0x3c00);
  // 1 + 3 * 2^-11 is halfway between 1 + 2^-10 (odd) and 1 + 2^-9 (even).
  EXPECT_EQ(fp32_to_fp16(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);
  EXPECT_EQ(fp32_to_fp16(65504.0f), 0x7bff);
  EXPECT_EQ(fp32_to_fp16(65519.0f), 0x7bff);
  EXPECT_EQ(fp32_to_fp16(65520.0f), 0x7c00);
  EXPECT_EQ(fp32_to_fp16(-1e10f), 0xfc00);
  EXPECT_EQ(fp32_to_fp16(std::ldexp(1.0f, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(fp32_to_fp16(std::ldexp(1.0f, -25)), 0x0000);  // tie with zero: even
  EXPECT_EQ(fp32_to_fp16(std::ldexp(1.5f, -25)), 0x0001);
  EXPECT_EQ(fp32_to_fp16(-0.0f), 0x8000);
}

#if defined(__x86_64__)
__attribute__((target("f16c"))) uint16_t hardware_fp16(float f) {
  return static_cast<uint16_t>(_cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT));
}

// The F16C instruction is an independent implementation of the same rounding.
TEST(Fp16, MatchesTheF16cInstruction) {
  if (!__builtin_cpu_supports("f16c")) GTEST_SKIP() << "no F16C on this CPU";
  std::mt19937 rng(7);
  std::uniform_int_distribution<uint32_t> bits;
  for (int i = 0; i < 1'000'000; ++i) {
    const float f = std::bit_cast<float>(bits(rng));
    if (std::isnan(f)) continue;
    ASSERT_EQ(fp32_to_fp16(f), hardware_fp16(f)) << f;
  }
}
#endif

TEST(Bf16, RoundsToNearestEvenAndKeepsNan) {
  EXPECT_EQ(fp32_to_bf16(1.0f), 0x3f80);
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties to even (1).
  EXPECT_EQ(fp32_to_bf16(1.0f + std::ldexp(1.0f, -8)), 0x3f80);
  EXPECT_EQ(fp32_to_bf16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3f82);
  EXPECT_EQ(fp32_to_bf16(1.0f + std::ldexp(1.0f, -8) + std::ldexp(1.0f, -20)), 0x3f81);
  EXPECT_TRUE(std::isnan(bf16_to_fp32(fp32_to_bf16(std::nanf("")))));
  for (uint32_t b = 0; b < 0x10000; ++b) {
    const float f = bf16_to_fp32(static_cast<uint16_t>(b));
    if (std::isnan(f)) continue;
    ASSERT_EQ(fp32_to_bf16(f), b);
  }
}

}  // namespace
}  // namespace hearth::quant
