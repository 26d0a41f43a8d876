#include <gtest/gtest.h>
#include <hearth/core/checked_math.h>

#include <limits>

namespace hearth {
namespace {

constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();

TEST(CheckedMath, AddDetectsWrap) {
  EXPECT_EQ(checked_add(1, 2), 3u);
  EXPECT_EQ(checked_add(kMax - 1, 1), kMax);
  EXPECT_FALSE(checked_add(kMax, 1).has_value());
}

TEST(CheckedMath, MulDetectsWrap) {
  EXPECT_EQ(checked_mul(1ull << 31, 1ull << 32), 1ull << 63);
  EXPECT_FALSE(checked_mul(1ull << 32, 1ull << 32).has_value());
  EXPECT_EQ(checked_mul(0, kMax), 0u);
}

TEST(CheckedMath, AlignUp) {
  EXPECT_EQ(checked_align_up(0, 32), 0u);
  EXPECT_EQ(checked_align_up(1, 32), 32u);
  EXPECT_EQ(checked_align_up(64, 32), 64u);
  EXPECT_EQ(checked_align_up(65, 32), 96u);
  EXPECT_FALSE(checked_align_up(kMax - 3, 32).has_value());
}

}  // namespace
}  // namespace hearth
