#include <gtest/gtest.h>
#include <hearth/engine/quant/types.h>

namespace hearth {
namespace {

// Block sizes from the GGUF specification's block layouts.
TEST(DTypeTraits, BlockBytesMatchTheFormatLayouts) {
  EXPECT_EQ(traits(DType::Q4_0).block_bytes, 18u);
  EXPECT_EQ(traits(DType::Q4_1).block_bytes, 20u);
  EXPECT_EQ(traits(DType::Q5_0).block_bytes, 22u);
  EXPECT_EQ(traits(DType::Q5_1).block_bytes, 24u);
  EXPECT_EQ(traits(DType::Q8_0).block_bytes, 34u);
  EXPECT_EQ(traits(DType::Q2_K).block_bytes, 84u);
  EXPECT_EQ(traits(DType::Q3_K).block_bytes, 110u);
  EXPECT_EQ(traits(DType::Q4_K).block_bytes, 144u);
  EXPECT_EQ(traits(DType::Q5_K).block_bytes, 176u);
  EXPECT_EQ(traits(DType::Q6_K).block_bytes, 210u);
  EXPECT_EQ(traits(DType::Q8_K).block_bytes, 292u);
  EXPECT_EQ(traits(DType::IQ4_NL).block_bytes, 18u);
  EXPECT_EQ(traits(DType::IQ4_XS).block_bytes, 136u);
  EXPECT_EQ(traits(DType::BF16).block_bytes, 2u);
}

TEST(DTypeTraits, UnknownIdsAreRejected) {
  EXPECT_FALSE(dtype_traits(4).has_value());   // removed Q4_2
  EXPECT_FALSE(dtype_traits(999).has_value());
  ASSERT_TRUE(dtype_traits(12).has_value());
  EXPECT_EQ(dtype_traits(12)->name, "Q4_K");
}

TEST(DTypeTraits, NamesRoundTrip) {
  EXPECT_EQ(dtype_from_name("q4_k"), DType::Q4_K);
  EXPECT_EQ(dtype_from_name("IQ4_XS"), DType::IQ4_XS);
  EXPECT_FALSE(dtype_from_name("Q4_K_M").has_value());
}

TEST(RowBytes, ChecksBlockMultiplesAndOverflow) {
  EXPECT_EQ(*row_bytes(DType::Q4_K, 512), 288u);
  EXPECT_EQ(*row_bytes(DType::F16, 3), 6u);
  EXPECT_FALSE(row_bytes(DType::Q4_0, 33).ok());
  EXPECT_FALSE(row_bytes(DType::F32, INT64_MAX).ok());
}

}  // namespace
}  // namespace hearth
